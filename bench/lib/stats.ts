/** Latency samples and percentiles. */

/** The p-th percentile (0..100) of an ascending array, nearest-rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Collects numbers (milliseconds) in a growable typed array; cheap enough for millions of samples. */
export class Samples {
  private data = new Float64Array(1 << 16);
  private n = 0;

  get count(): number {
    return this.n;
  }

  add(v: number): void {
    if (this.n === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.n++] = v;
  }

  summary(): { count: number; mean: number; p50: number; p90: number; p99: number; max: number } {
    const s = this.data.slice(0, this.n).sort();
    let sum = 0;
    for (const v of s) sum += v;
    return {
      count: this.n,
      mean: this.n ? sum / this.n : NaN,
      p50: percentile(s, 50),
      p90: percentile(s, 90),
      p99: percentile(s, 99),
      max: this.n ? s[this.n - 1]! : NaN,
    };
  }
}

export function median(values: number[]): number {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
