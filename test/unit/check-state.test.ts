import { eventExtras } from '../../actors/pipeline/synthesize.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HISTORY_LENGTH, isFlapping, mergeCheck, totalStateChange } from '../../actors/entity/check-state.ts';
import {
  nextJudgement,
  silenceStatus,
  silentOutput,
  okOutput,
  derivedEventId,
} from '../../actors/entity/keepalive.ts';
import { goTimeString } from '../../actors/entity/gotime.ts';
import type { Check } from '../../proto/schemas/event.ts';

const hist = (statuses: number[]) => statuses.map((status, i) => ({ status, executed: 1000 + i }));

// Expected scores computed independently with IEEE float32 arithmetic (numpy), as the reference does.
test('total state change matches float32 vectors', () => {
  assert.is(totalStateChange(hist(Array.from({ length: 21 }, (_, i) => i % 2))), 98);
  assert.is(totalStateChange(hist([...Array(20).fill(0), 1])), 5);
  assert.is(totalStateChange(hist([...Array(10).fill(0), ...Array(11).fill(1)])), 4);
  assert.is(totalStateChange(hist([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, ...Array(11).fill(0)])), 44);
  assert.is(totalStateChange(hist([...Array(11).fill(0), 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])), 49);
  assert.is(totalStateChange(hist(Array(21).fill(2))), 0);
});

test('total state change is 0 until the history is full', () => {
  assert.is(totalStateChange(hist(Array.from({ length: 20 }, (_, i) => i % 2))), 0);
});

test('occurrences, watermark, state and last_ok follow a status sequence', () => {
  const steps: Array<[number, number, number, string, number]> = [
    // status, occurrences, watermark, state, last_ok
    [0, 1, 1, 'passing', 100],
    [1, 1, 1, 'failing', 100],
    [1, 2, 2, 'failing', 100],
    [2, 1, 2, 'failing', 100], // warning -> critical keeps the watermark
    [2, 2, 2, 'failing', 100],
    [2, 3, 3, 'failing', 100],
    [0, 1, 3, 'passing', 160],
    [1, 1, 1, 'failing', 160], // first non-OK after OK resets it
  ];
  let prev: Check | undefined;
  steps.forEach(([status, occ, wm, state, lastOk], i) => {
    const executed = 100 + i * 10;
    const cur = mergeCheck(prev, { metadata: { name: 'c' }, status, executed });
    assert.is(cur.occurrences, occ, `step ${i} occurrences`);
    assert.is(cur.occurrences_watermark, wm, `step ${i} watermark`);
    assert.is(cur.state, state, `step ${i} state`);
    assert.is(cur.last_ok, lastOk, `step ${i} last_ok`);
    assert.equal(cur.history!.at(-1), { status, executed });
    prev = cur;
  });
});

test('the first result of a failing check is failing with no last_ok', () => {
  const c = mergeCheck(undefined, { metadata: { name: 'c' }, status: 2, executed: 5 });
  assert.is(c.state, 'failing');
  assert.is(c.last_ok, 0);
  assert.is(c.occurrences, 1);
  assert.is(c.occurrences_watermark, 1);
});

test('history keeps the last 21 results', () => {
  let prev: Check | undefined;
  for (let i = 0; i < 30; i++) prev = mergeCheck(prev, { metadata: { name: 'c' }, status: 0, executed: i });
  assert.is(prev!.history!.length, HISTORY_LENGTH);
  assert.is(prev!.history![0]!.executed, 9);
  assert.is(prev!.occurrences, 30);
});

test('flapping starts at the high threshold and ends at the low one', () => {
  assert.not.ok(isFlapping(50, false, 0, 60), 'needs both thresholds');
  assert.ok(isFlapping(60, false, 20, 60));
  assert.not.ok(isFlapping(59, false, 20, 60));
  assert.ok(isFlapping(21, true, 20, 60), 'stays flapping above low');
  assert.not.ok(isFlapping(20, true, 20, 60), 'ends at low');
  let prev: Check | undefined;
  for (let i = 0; i < 21; i++)
    prev = mergeCheck(prev, {
      metadata: { name: 'c' },
      status: i % 2 ? 2 : 0,
      executed: i,
      low_flap_threshold: 20,
      high_flap_threshold: 60,
    });
  assert.is(prev!.state, 'flapping');
});

test('a flapping episode: exactly one start and one end, seen by filters through the extras', () => {
  // 21 alternating results start flapping (score 98 in float32, >= 60); steady OKs then lower the score until
  // it reaches the low threshold (20), which ends it.
  let prev: Check | undefined;
  const marks: string[] = [];
  const statuses = [...Array.from({ length: 21 }, (_, i) => (i % 2 ? 2 : 0)), ...Array(30).fill(0)];
  statuses.forEach((status, i) => {
    const before = prev?.state;
    prev = mergeCheck(prev, {
      metadata: { name: 'c' },
      status,
      executed: i,
      low_flap_threshold: 20,
      high_flap_threshold: 60,
    });
    const x = eventExtras({ check: prev }, before);
    if (x.is_flapping_start) marks.push(`start@${i}:${prev.total_state_change}`);
    if (x.is_flapping_end) marks.push(`end@${i}:${prev.total_state_change}`);
  });
  assert.is(marks.length, 2, marks.join(' '));
  assert.match(marks[0]!, /^start@20:98$/);
  const end = /^end@(\d+):(\d+)$/.exec(marks[1]!);
  assert.ok(end && Number(end[2]) <= 20, marks[1]);
  assert.is(prev!.state, 'passing');
});

test('keepalive judgements: warning, then critical, then every warning timeout', () => {
  const ka = { interval: 2, warning: 10, critical: 25, last_seen_ms: 0, handlers: ['keepalive'] };
  assert.is(nextJudgement(ka, 0), 10_000);
  assert.is(nextJudgement(ka, 10_000), 20_000);
  assert.is(nextJudgement(ka, 20_000), 25_000);
  assert.is(nextJudgement(ka, 25_000), 35_000);
  assert.equal(silenceStatus(ka, 10_000), { status: 1, timeout: 10 });
  assert.equal(silenceStatus(ka, 25_000), { status: 2, timeout: 25 });
  const noCrit = { ...ka, critical: 0 };
  assert.is(nextJudgement(noCrit, 10_000), 20_000);
  assert.equal(silenceStatus(noCrit, 1_000_000), { status: 1, timeout: 10 });
});

test('keepalive outputs', () => {
  assert.is(silentOutput('web-01', 12, 10), 'No keepalive sent from web-01 for 12 seconds (>= 10)');
  assert.is(goTimeString(0), '1970-01-01 00:00:00 +0000 UTC');
  assert.is(
    okOutput('web-01', 1700000000),
    'Keepalive last sent from web-01 at 2023-11-14 22:13:20 +0000 UTC',
  );
});

test('derived event ids are stable UUIDs', () => {
  const a = derivedEventId('default', 'web', 'keepalive', 1);
  assert.is(a, derivedEventId('default', 'web', 'keepalive', 1));
  assert.is.not(a, derivedEventId('default', 'web', 'keepalive', 2));
  assert.ok(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(a), a);
});

test.run();
