import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { subdued } from '../../actors/schedule/subdue.ts';

const at = (iso: string) => Date.parse(iso);

test('a one-off window: inside, before, after; end is exclusive', () => {
  const w = [{ begin: '2026-01-05T10:00:00Z', end: '2026-01-05T12:00:00Z' }];
  assert.ok(subdued(w, at('2026-01-05T11:00:00Z')));
  assert.ok(!subdued(w, at('2026-01-05T09:59:59Z')));
  assert.ok(!subdued(w, at('2026-01-05T12:00:00Z')));
  assert.ok(!subdued(w, at('2026-01-06T11:00:00Z')), 'no repeat');
});

test('daily, weekdays, weekends, named days, in the offset of begin', () => {
  // 2026-01-05 is a Monday. 22:00-02:00 in UTC-05:00 is 03:00-07:00 UTC.
  const daily = [{ begin: '2026-01-05T22:00:00-05:00', end: '2026-01-06T02:00:00-05:00', repeat: ['daily'] }];
  assert.ok(subdued(daily, at('2026-01-09T04:00:00Z')));
  assert.ok(!subdued(daily, at('2026-01-09T08:00:00Z')));
  assert.ok(!subdued(daily, at('2026-01-06T02:59:00Z')), 'before the first window');
  const weekdays = [{ begin: '2026-01-05T09:00:00Z', end: '2026-01-05T17:00:00Z', repeat: ['weekdays'] }];
  assert.ok(subdued(weekdays, at('2026-01-09T10:00:00Z')), 'Friday');
  assert.ok(!subdued(weekdays, at('2026-01-10T10:00:00Z')), 'Saturday');
  const weekends = [{ begin: '2026-01-05T09:00:00Z', end: '2026-01-05T17:00:00Z', repeat: ['weekends'] }];
  assert.ok(subdued(weekends, at('2026-01-11T10:00:00Z')), 'Sunday');
  assert.ok(!subdued(weekends, at('2026-01-12T10:00:00Z')), 'Monday');
  const named = [{ begin: '2026-01-05T09:00:00Z', end: '2026-01-05T10:00:00Z', repeat: ['wednesday'] }];
  assert.ok(subdued(named, at('2026-01-07T09:30:00Z')));
  assert.ok(!subdued(named, at('2026-01-08T09:30:00Z')));
});

test('weekly and monthly', () => {
  const weekly = [{ begin: '2026-01-05T09:00:00Z', end: '2026-01-05T10:00:00Z', repeat: ['weekly'] }];
  assert.ok(subdued(weekly, at('2026-01-19T09:30:00Z')));
  assert.ok(!subdued(weekly, at('2026-01-20T09:30:00Z')));
  const monthly = [{ begin: '2026-01-05T09:00:00Z', end: '2026-01-05T10:00:00Z', repeat: ['monthly'] }];
  assert.ok(subdued(monthly, at('2026-03-05T09:30:00Z')));
  assert.ok(!subdued(monthly, at('2026-03-06T09:30:00Z')));
});

test('unreadable windows never subdue', () => {
  assert.ok(!subdued([{ begin: 'soon', end: 'later' }], Date.now()));
  assert.ok(
    !subdued([{ begin: '2026-01-05T10:00:00Z', end: '2026-01-05T09:00:00Z' }], at('2026-01-05T09:30:00Z')),
  );
  assert.ok(!subdued(null, Date.now()));
  assert.ok(
    !subdued(
      [{ begin: '2026-01-05T09:00:00Z', end: '2026-01-05T10:00:00Z', repeat: ['fortnightly'] }],
      at('2026-01-06T09:30:00Z'),
    ),
  );
});

test.run();
