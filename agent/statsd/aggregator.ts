import type { StatsdMetric, StatsdTag } from '../../proto/schemas/statsd.ts';

// Gathers StatsD metrics between flushes and turns them into metric points named as Sensu does:
// counters `.value` `.per_second`; timers `.min .max .count .per_second .mean .median .stddev .sum
// .sum_squares .percentile_90`; gauges and sets `.value`.

/** Percentiles reported for timers, as `.percentile_<p>` (nearest rank). */
const TIMER_PERCENTILES = [90] as const;
/** Distinct series kept per interval; more are dropped (and counted) so memory stays bounded. */
export const MAX_SERIES = 10_000;
/** Values of one timer, or members of one set, kept per interval; more are dropped (and counted). */
export const MAX_VALUES_PER_SERIES = 100_000;
/** Flushes an unchanged gauge is remembered for (for `+n`/`-n`) before it is forgotten. */
export const GAUGE_IDLE_FLUSHES = 30;

export interface MetricPoint {
  name: string;
  value: number;
  timestamp: number;
  tags: StatsdTag[];
}

interface Series {
  name: string;
  tags: StatsdTag[];
}
interface Counter extends Series {
  sum: number;
}
interface Timer extends Series {
  values: number[];
  sampled: number;
}
interface Gauge extends Series {
  value: number;
  touched: boolean;
  idle: number;
}
interface SetSeries extends Series {
  members: Set<string>;
}

const seriesKey = (m: StatsdMetric) =>
  m.tags.length === 0
    ? m.name
    : `${m.name}\u0000${m.tags
        .map((t) => `${t.name}:${t.value}`)
        .sort()
        .join(',')}`;

export class StatsdAggregator {
  private counters = new Map<string, Counter>();
  private timers = new Map<string, Timer>();
  private sets = new Map<string, SetSeries>();
  /** Gauges outlive a flush so `+n`/`-n` have something to change; only touched ones are reported. */
  private gauges = new Map<string, Gauge>();
  dropped = 0;

  private size(): number {
    return this.counters.size + this.timers.size + this.sets.size + this.gauges.size;
  }

  private slot<T extends Series>(map: Map<string, T>, m: StatsdMetric, make: () => T): T | undefined {
    const key = seriesKey(m);
    let s = map.get(key);
    if (!s) {
      if (this.size() >= MAX_SERIES) {
        this.dropped++;
        return undefined;
      }
      s = make();
      map.set(key, s);
    }
    return s;
  }

  add(m: StatsdMetric): void {
    const base = { name: m.name, tags: m.tags };
    switch (m.type) {
      case 'c': {
        const c = this.slot(this.counters, m, () => ({ ...base, sum: 0 }));
        if (c) c.sum += m.value / m.rate;
        return;
      }
      case 'ms':
      case 'h': {
        const t = this.slot(this.timers, m, () => ({ ...base, values: [], sampled: 0 }));
        if (!t) return;
        if (t.values.length >= MAX_VALUES_PER_SERIES) {
          this.dropped++;
          return;
        }
        t.values.push(m.value);
        t.sampled += 1 / m.rate;
        return;
      }
      case 'g': {
        const g = this.slot(this.gauges, m, () => ({ ...base, value: 0, touched: false, idle: 0 }));
        if (g) {
          g.value = m.relative ? g.value + m.value : m.value;
          g.touched = true;
          g.idle = 0;
        }
        return;
      }
      case 's': {
        const s = this.slot(this.sets, m, () => ({ ...base, members: new Set<string>() }));
        if (!s) return;
        if (s.members.size >= MAX_VALUES_PER_SERIES && !s.members.has(m.member ?? '')) {
          this.dropped++;
          return;
        }
        s.members.add(m.member ?? '');
        return;
      }
    }
  }

  /** The points of the interval just ended; the aggregator starts a new interval. */
  flush(timestamp: number, intervalSec: number): MetricPoint[] {
    const points: MetricPoint[] = [];
    const point = (s: Series, suffix: string, value: number) =>
      points.push({ name: `${s.name}.${suffix}`, value, timestamp, tags: s.tags });
    for (const c of this.counters.values()) {
      point(c, 'value', c.sum);
      point(c, 'per_second', c.sum / intervalSec);
    }
    for (const t of this.timers.values()) {
      for (const [suffix, value] of Object.entries(timerStats(t.values, t.sampled, intervalSec)))
        point(t, suffix, value);
    }
    for (const [key, g] of this.gauges) {
      if (g.touched) point(g, 'value', g.value);
      else if (++g.idle >= GAUGE_IDLE_FLUSHES) this.gauges.delete(key);
      g.touched = false;
    }
    for (const s of this.sets.values()) point(s, 'value', s.members.size);
    this.counters.clear();
    this.timers.clear();
    this.sets.clear();
    return points;
  }
}

/** Statistics of one timer's values; `count` is the values received, `per_second` honours sample rates. */
export function timerStats(values: number[], sampled: number, intervalSec: number): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const sum = sorted.reduce((a, b) => a + b, 0);
  const sumSquares = sorted.reduce((a, b) => a + b * b, 0);
  const mean = sum / n;
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const variance = sorted.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
  const stats: Record<string, number> = {
    min: sorted[0]!,
    max: sorted[n - 1]!,
    count: n,
    per_second: sampled / intervalSec,
    mean,
    median,
    stddev: Math.sqrt(variance),
    sum,
    sum_squares: sumSquares,
  };
  for (const p of TIMER_PERCENTILES)
    stats[`percentile_${p}`] = sorted[Math.max(0, Math.ceil((p / 100) * n) - 1)]!;
  return stats;
}
