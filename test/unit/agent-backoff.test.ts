import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Backoff } from '../../agent/backoff.ts';
import { BackendSelector } from '../../agent/connection.ts';

const round = (n: number) => Math.round(n * 1000) / 1000;
const seq = (b: Backoff, n: number) => Array.from({ length: n }, () => round(b.next()));

test('without jitter: starts at min, multiplies, caps at max', () => {
  const b = new Backoff({ min: 1, max: 120, multiplier: 2, random: () => 0 });
  assert.equal(seq(b, 9), [1, 2, 4, 8, 16, 32, 64, 120, 120]);
});

test('jitter adds up to 100% of the wait, never past max', () => {
  const full = new Backoff({ min: 1, max: 10, multiplier: 2, random: () => 0.999999 });
  assert.equal(seq(full, 5), [2, 4, 8, 10, 10]);
  const half = new Backoff({ min: 1, max: 120, multiplier: 2, random: () => 0.5 });
  assert.equal(seq(half, 4), [1.5, 3, 6, 12]);
});

test('every delay lies within [wait, min(2 * wait, max)] with real randomness', () => {
  const b = new Backoff({ min: 0.5, max: 30, multiplier: 3 });
  let wait = 0.5;
  for (let i = 0; i < 50; i++) {
    const d = b.next();
    assert.ok(d >= Math.min(wait, 30) && d <= Math.min(2 * wait, 30), `attempt ${i}: ${d} for wait ${wait}`);
    wait = Math.min(wait * 3, 30);
  }
});

test('reset starts over from min', () => {
  const b = new Backoff({ min: 0.1, max: 5, multiplier: 2, random: () => 0 });
  seq(b, 6);
  b.reset();
  assert.equal(seq(b, 3), [0.1, 0.2, 0.4]);
});

test('multiplier 1 keeps a constant wait; a long outage never overflows', () => {
  assert.equal(seq(new Backoff({ min: 3, max: 10, multiplier: 1, random: () => 0 }), 3), [3, 3, 3]);
  const b = new Backoff({ min: 1, max: 120, multiplier: 10, random: () => 0.5 });
  for (let i = 0; i < 2000; i++) b.next();
  assert.is(b.next(), 120);
});

test('invalid settings are refused', () => {
  assert.throws(() => new Backoff({ min: 0, max: 1, multiplier: 2 }), /invalid backoff/);
  assert.throws(() => new Backoff({ min: 2, max: 1, multiplier: 2 }), /invalid backoff/);
  assert.throws(() => new Backoff({ min: 1, max: 2, multiplier: 0.5 }), /invalid backoff/);
});

test('backend selector: shuffled once, then round robin', () => {
  const urls = ['ws://a:8081', 'ws://b:8081', 'ws://c:8081'];
  const keep = new BackendSelector(urls, () => 0.999);
  assert.equal(
    [1, 2, 3, 4, 5].map(() => keep.next()),
    ['ws://a:8081', 'ws://b:8081', 'ws://c:8081', 'ws://a:8081', 'ws://b:8081'],
  );
  const shuffled = new BackendSelector(urls, () => 0);
  const round1 = [1, 2, 3].map(() => shuffled.next());
  assert.equal([...round1].sort(), urls);
  assert.equal(
    [1, 2, 3].map(() => shuffled.next()),
    round1,
  );
  assert.throws(() => new BackendSelector([]), /no backend URL/);
});

test.run();
