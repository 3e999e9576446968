import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nextIntervalFire, splayOf } from '../../actors/schedule/splay.ts';

// Vectors computed independently (Python: struct.unpack('<Q', md5(name).digest()[:8])).
test('splay is the little-endian uint64 of md5(check name)', () => {
  assert.is(splayOf('check-cpu'), 260384143942206841n);
  assert.is(splayOf('disk'), 14129671233914759285n);
  assert.is(splayOf('a'), 12157170054180749580n);
});

test('next fire is the next instant in phase with the splay', () => {
  assert.is(nextIntervalFire('check-cpu', 60, 1700000000000), 1700000046841);
  assert.is(nextIntervalFire('check-cpu', 10, 1700000000123), 1700000006841);
  assert.is(nextIntervalFire('check-cpu', 7, 1), 4841);
});

test('strictly after: a fire at a phase instant re-arms one interval later, never drifting', () => {
  let t = nextIntervalFire('web', 5, 1_000_000);
  const first = t;
  for (let i = 1; i <= 100; i++) {
    t = nextIntervalFire('web', 5, t);
    assert.is(t, first + i * 5000);
  }
});

test('a node down across many ticks fires once at the next phase, not a burst', () => {
  const at = nextIntervalFire('web', 5, 1_000_000);
  const late = at + 5000 * 7 + 1234;
  const next = nextIntervalFire('web', 5, late);
  assert.ok(next > late && next - late <= 5000);
  assert.is((next - at) % 5000, 0);
});

test('all nodes agree whatever instant they compute from', () => {
  const a = nextIntervalFire('x', 30, 1_700_000_000_000);
  for (let d = 0; d < 30_000; d += 777) {
    const b = nextIntervalFire('x', 30, 1_700_000_000_000 + d);
    assert.ok(b === a || b === a + 30_000);
  }
});

test.run();
