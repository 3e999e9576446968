import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nextCronFire } from '../../lib/cron.ts';
import { CronError, parseCron } from '../../proto/cron.ts';

const at = (iso: string) => Date.parse(iso);
const next = (expr: string, after: string) => {
  const r = nextCronFire(parseCron(expr), at(after));
  return r === undefined ? undefined : new Date(r).toISOString();
};

test('every minute: the next whole minute, strictly after', () => {
  assert.is(next('* * * * *', '2026-01-01T10:00:00.000Z'), '2026-01-01T10:01:00.000Z');
  assert.is(next('* * * * *', '2026-01-01T10:00:30.500Z'), '2026-01-01T10:01:00.000Z');
});

test('lists, ranges, steps', () => {
  assert.is(next('*/15 * * * *', '2026-01-01T10:07:00Z'), '2026-01-01T10:15:00.000Z');
  assert.is(next('5,35 * * * *', '2026-01-01T10:35:00Z'), '2026-01-01T11:05:00.000Z');
  assert.is(next('0 9-17/4 * * *', '2026-01-01T13:00:00Z'), '2026-01-01T17:00:00.000Z');
  assert.is(next('0 9-17/4 * * *', '2026-01-01T17:00:00Z'), '2026-01-02T09:00:00.000Z');
  assert.is(next('10/20 * * * *', '2026-01-01T10:31:00Z'), '2026-01-01T10:50:00.000Z');
});

test('month and day names, 7 is Sunday', () => {
  // 2026-01-01 is a Thursday.
  assert.is(next('30 6 * * mon', '2026-01-01T00:00:00Z'), '2026-01-05T06:30:00.000Z');
  assert.is(next('0 0 * * 7', '2026-01-01T00:00:00Z'), '2026-01-04T00:00:00.000Z');
  assert.is(next('0 0 * * SAT,SUN', '2026-01-01T00:00:00Z'), '2026-01-03T00:00:00.000Z');
  assert.is(next('0 12 1 mar,jun *', '2026-01-01T00:00:00Z'), '2026-03-01T12:00:00.000Z');
  assert.is(next('0 0 29 feb *', '2026-01-01T00:00:00Z'), '2028-02-29T00:00:00.000Z');
});

test('day of month and day of week both restricted: either matches', () => {
  // 13th of the month or any Friday: Friday 2026-01-02 comes first.
  assert.is(next('0 0 13 * 5', '2026-01-01T00:00:00Z'), '2026-01-02T00:00:00.000Z');
  // With a star day of week only the day of month counts.
  assert.is(next('0 0 13 * *', '2026-01-01T00:00:00Z'), '2026-01-13T00:00:00.000Z');
});

test('shorthands and year rollover', () => {
  assert.is(next('@hourly', '2026-12-31T23:10:00Z'), '2027-01-01T00:00:00.000Z');
  assert.is(next('@yearly', '2026-06-01T00:00:00Z'), '2027-01-01T00:00:00.000Z');
  assert.is(next('@weekly', '2026-01-01T00:00:00Z'), '2026-01-04T00:00:00.000Z');
});

test('CRON_TZ / TZ prefix: times in that zone, DST respected', () => {
  // New York is UTC-5 in January, UTC-4 in July.
  assert.is(next('CRON_TZ=America/New_York 0 9 * * *', '2026-01-01T00:00:00Z'), '2026-01-01T14:00:00.000Z');
  assert.is(next('TZ=America/New_York 0 9 * * *', '2026-07-01T00:00:00Z'), '2026-07-01T13:00:00.000Z');
  assert.is(next('CRON_TZ=Asia/Kolkata 30 0 * * *', '2026-01-01T00:00:00Z'), '2026-01-01T19:00:00.000Z');
});

test('impossible dates give no fire time', () => {
  assert.is(next('0 0 31 feb *', '2026-01-01T00:00:00Z'), undefined);
});

test('bad expressions are refused with a clear error', () => {
  for (const bad of [
    '',
    '* * * *',
    '* * * * * *',
    '60 * * * *',
    '* 24 * * *',
    '* * 0 * *',
    '* * * 13 *',
    '* * * * 8',
    '*/0 * * * *',
    '5-1 * * * *',
    'a * * * *',
    '1,,2 * * * *',
    '@sometimes',
    'CRON_TZ=Nowhere/Land * * * * *',
    '1/2/3 * * * *',
  ]) {
    assert.throws(
      () => parseCron(bad),
      (e: unknown) => e instanceof CronError,
      bad,
    );
  }
});

test.run();
