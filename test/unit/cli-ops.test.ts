import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOLVED_OUTPUT, resolvedEvent } from '../../cli/commands/event-ops.ts';
import { commaList, durationSeconds, parseBegin, parseExpire } from '../../cli/commands/ops-input.ts';
import { silencedFields, silencedName } from '../../cli/commands/silenced-ops.ts';
import { usageMessage } from './cli/usage-error.ts';

// The pure parts of monitorctl's operation commands: --begin and --expire, silenced names and
// fields, the resolved form of an event.

const NOW = Date.parse('2030-05-01T12:00:00Z');
const nowSec = NOW / 1000;

const usage = usageMessage;

test('durations: whole seconds or d/h/m/s parts in order', () => {
  assert.is(durationSeconds('90'), 90);
  assert.is(durationSeconds('90s'), 90);
  assert.is(durationSeconds('30m'), 1800);
  assert.is(durationSeconds('1h30m'), 5400);
  assert.is(durationSeconds('2d'), 172800);
  assert.is(durationSeconds('1d2h3m4s'), 93784);
  for (const bad of ['', 'h', '1x', '30m1h', '-5', '1.5h', '1 h'])
    assert.is(durationSeconds(bad), undefined, bad);
});

test('--begin: now, +DURATION after now, or RFC 3339 with a zone', () => {
  assert.is(parseBegin('now', NOW), nowSec);
  assert.is(parseBegin('NOW', NOW), nowSec);
  assert.is(parseBegin('+1h', NOW), nowSec + 3600);
  assert.is(parseBegin('+1h30m', NOW), nowSec + 5400);
  assert.is(parseBegin('+90', NOW), nowSec + 90);
  assert.is(parseBegin('2030-05-01T13:00:00Z', NOW), nowSec + 3600);
  assert.is(parseBegin('2030-05-01T15:00:00+02:00', NOW), nowSec + 3600);
  assert.is(parseBegin('2030-05-01T13:00:00.750Z', NOW), nowSec + 3600);
  assert.is(parseBegin('2030-05-01 13:00:00z', NOW), nowSec + 3600);
  for (const bad of [
    '+',
    '+1x',
    'tomorrow',
    '2030-05-01',
    '2030-05-01T13:00:00',
    '2030-13-01T13:00:00Z',
    '-1h',
  ])
    assert.match(
      usage(() => parseBegin(bad, NOW)),
      /--begin/,
      bad,
    );
});

test('--expire: positive seconds or a duration', () => {
  assert.is(parseExpire('3600'), 3600);
  assert.is(parseExpire('1h'), 3600);
  assert.is(parseExpire('45s'), 45);
  for (const bad of ['0', '0s', '-1', 'never', ''])
    assert.match(
      usage(() => parseExpire(bad)),
      /--expire/,
      bad,
    );
});

test('silenced names: subscription:check with * for a missing part', () => {
  assert.is(silencedName('linux', 'disk'), 'linux:disk');
  assert.is(silencedName('linux', undefined), 'linux:*');
  assert.is(silencedName(undefined, 'disk'), '*:disk');
  assert.is(silencedName('', 'disk'), '*:disk');
  assert.is(silencedName('entity:web-1', undefined), 'entity:web-1:*');
});

test('silenced fields: the flags given, subscription and check only when they name the entry', () => {
  const o = {
    subscription: 'linux',
    check: 'disk',
    begin: '+1h',
    expire: '30m',
    expireOnResolve: true,
    reason: 'r',
  };
  assert.equal(silencedFields(o, NOW, true), {
    subscription: 'linux',
    check: 'disk',
    begin: nowSec + 3600,
    expire: 1800,
    expire_on_resolve: true,
    reason: 'r',
  });
  assert.equal(silencedFields(o, NOW, false), {
    begin: nowSec + 3600,
    expire: 1800,
    expire_on_resolve: true,
    reason: 'r',
  });
  assert.equal(silencedFields({ expireOnResolve: false }, NOW, false), { expire_on_resolve: false });
  assert.equal(silencedFields({}, NOW, true), {});
});

test('comma lists drop blanks', () => {
  assert.equal(commaList('a, b,,c ,'), ['a', 'b', 'c']);
  assert.equal(commaList(''), []);
});

test('a resolved event: status 0, the manual output, executed and timestamp now, the rest kept', () => {
  const e = {
    id: 'u1',
    entity: { metadata: { name: 'web' } },
    check: { metadata: { name: 'disk' }, status: 2, output: 'CRITICAL', executed: 1, interval: 60 },
    timestamp: 1,
  };
  const r = resolvedEvent(e, NOW) as any;
  assert.is(r.check.status, 0);
  assert.is(r.check.output, RESOLVED_OUTPUT);
  assert.is(r.check.output, 'Resolved manually by monitorctl');
  assert.is(r.check.executed, nowSec);
  assert.is(r.timestamp, nowSec);
  assert.is(r.check.interval, 60);
  assert.is(r.id, 'u1');
  assert.is(e.check.status, 2, 'the original is not changed');
});

test.run();
