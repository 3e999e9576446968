import { createHash } from 'node:crypto';

// The legacy generation's splay (docs/compatibility.md#legacy-client): the first run of a standalone check
// waits `(hash - now_ms) mod (interval * 1000)` ms, hash being the first 8 bytes of md5(key) read as a
// little-endian uint64, key `<client>:<check>` on a client (`<check>` on the legacy server). Hosts with
// synchronised clocks thus run a check in the same phase, whenever each started.

/** Seconds (millisecond precision) before the first run; in [0, interval). */
export function legacySplay(key: string, intervalSeconds: number, nowMs: number): number {
  const hash = createHash('md5').update(key, 'utf8').digest().readBigUInt64LE(0);
  const period = BigInt(Math.max(1, Math.round(intervalSeconds * 1000)));
  const diff = (hash - BigInt(Math.floor(nowMs))) % period;
  // BigInt `%` keeps the dividend's sign; the legacy modulo is never negative.
  return Number(diff < 0n ? diff + period : diff) / 1000;
}
