import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TimerHeap, type TimerEntry } from '../../actors/runtime/timers.ts';
import { Mailbox } from '../../actors/runtime/mailbox.ts';

const entry = (key: string, fireAt: number, shard = 0): TimerEntry => ({
  key,
  shard,
  kind: 'entity',
  id: key,
  name: 't',
  at: fireAt,
  fireAt,
});

test('takeDue returns due entries in deadline order and keeps the rest', () => {
  let now = 1000;
  const heap = new TimerHeap(
    () => {},
    () => now,
  );
  for (const [k, t] of [
    ['c', 1300],
    ['a', 1100],
    ['d', 1400],
    ['b', 1200],
  ] as const)
    heap.set(entry(k, t));
  now = 1250;
  assert.equal(
    heap.takeDue().map((e) => e.key),
    ['a', 'b'],
  );
  assert.is(heap.size, 2);
  now = 2000;
  assert.equal(
    heap.takeDue().map((e) => e.key),
    ['c', 'd'],
  );
  heap.clear();
});

test('a newer entry for the same key replaces the old one', () => {
  let now = 0;
  const heap = new TimerHeap(
    () => {},
    () => now,
  );
  heap.set(entry('x', 100));
  heap.set(entry('x', 500));
  now = 200;
  assert.equal(heap.takeDue(), []);
  now = 600;
  assert.equal(
    heap.takeDue().map((e) => e.fireAt),
    [500],
  );
  heap.clear();
});

test('delete and dropShard remove entries', () => {
  let now = 0;
  const heap = new TimerHeap(
    () => {},
    () => now,
  );
  heap.set(entry('a', 10, 1));
  heap.set(entry('b', 20, 2));
  heap.set(entry('c', 30, 2));
  heap.delete('a');
  heap.dropShard(2);
  now = 100;
  assert.equal(heap.takeDue(), []);
  assert.is(heap.size, 0);
  heap.clear();
});

test('random operations agree with a sorted reference', () => {
  let now = 0;
  const heap = new TimerHeap(
    () => {},
    () => now,
  );
  const ref = new Map<string, number>();
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < 2000; i++) {
    const k = `k${Math.floor(rnd() * 300)}`;
    if (rnd() < 0.2) {
      heap.delete(k);
      ref.delete(k);
    } else {
      const t = Math.floor(rnd() * 10_000);
      heap.set(entry(k, t));
      ref.set(k, t);
    }
  }
  now = 5000;
  const due = heap.takeDue();
  const expected = [...ref].filter(([, t]) => t <= 5000).sort((a, b) => a[1] - b[1]);
  assert.equal(
    due.map((e) => e.fireAt),
    expected.map(([, t]) => t),
  );
  assert.equal(new Set(due.map((e) => e.key)), new Set(expected.map(([k]) => k)));
  heap.clear();
});

test('fires through real timers, never early', async () => {
  const fired: Array<{ key: string; late: number }> = [];
  const heap = new TimerHeap((e) => fired.push({ key: e.key, late: Date.now() - e.fireAt }));
  const t0 = Date.now();
  heap.set(entry('late', t0 + 60));
  heap.set(entry('soon', t0 + 20));
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(
    fired.map((f) => f.key),
    ['soon', 'late'],
  );
  for (const f of fired) assert.ok(f.late >= 0, `fired ${-f.late}ms early`);
  heap.clear();
});

test('mailbox runs jobs one at a time in order, across awaits', async () => {
  const box = new Mailbox();
  const log: string[] = [];
  const job = (name: string, ms: number) => async () => {
    log.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`end ${name}`);
    return name;
  };
  const results = await Promise.all([box.post(job('a', 20)), box.post(job('b', 1)), box.post(job('c', 5))]);
  assert.equal(results, ['a', 'b', 'c']);
  assert.equal(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  assert.is(box.depth, 0);
});

test('a failing job does not stop the mailbox', async () => {
  const box = new Mailbox();
  const failed = box.post(async () => {
    throw new Error('boom');
  });
  const next = box.post(async () => 'ok');
  const err = await failed.then(
    () => undefined,
    (e: Error) => e,
  );
  assert.match(err?.message ?? '', /boom/);
  assert.is(await next, 'ok');
});

test.run();
