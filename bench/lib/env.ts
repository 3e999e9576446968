/**
 * A numeric knob from the environment: `dflt` when unset or empty, otherwise a finite number >= 0, or
 * an error naming the variable (a typo must not quietly become NaN in a benchmark's configuration).
 */
export function envNumber(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${v}: expected a number >= 0`);
  return n;
}
