import { createHash } from 'node:crypto';

/**
 * Deterministic phase of an interval check (docs/compatibility.md#interval-splay): the little-endian uint64
 * of md5(name). Every node computes the same value, so whoever owns the schedule fires at the same wall-clock
 * phase (given NTP), and a takeover keeps the rhythm.
 */
export function splayOf(checkName: string): bigint {
  return createHash('md5').update(checkName, 'utf8').digest().readBigUInt64LE(0);
}

/**
 * The first instant (epoch ms) strictly after `afterMs` with (t - splay) mod interval == 0, in
 * milliseconds. Strictly after: a tick that fired at t re-arms for t + interval, and a node that
 * was down across several ticks fires once at the next phase, never a burst.
 */
export function nextIntervalFire(checkName: string, intervalSeconds: number, afterMs: number): number {
  const interval = BigInt(Math.max(1, Math.round(intervalSeconds * 1000)));
  const phase = splayOf(checkName) % interval;
  const after = BigInt(Math.floor(afterMs));
  // Offset of `after` past the last phase instant, in [0, interval).
  const past = (((after - phase) % interval) + interval) % interval;
  return Number(after - past + interval);
}
