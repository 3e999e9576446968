/**
 * What the metrics extraction suites (metrics.test.ts, metrics-nagios.test.ts) share: extraction at
 * a fixed execution time, points reduced to [name, value, timestamp], and the checks every point
 * must pass.
 */
import * as assert from 'uvu/assert';
import { extractMetrics } from '../../../agent/metrics/index.ts';
import { type MetricPoint } from '../../../agent/metrics/point.ts';

/** The check's execution time: the timestamp of a point that carries none. */
export const EXECUTED = 1700000000;
export const run = (format: string, output: string, tags?: { name: string; value: string }[]) =>
  extractMetrics(format, output, { executed: EXECUTED, tags });
export const simple = (points: MetricPoint[]) => points.map((p) => [p.name, p.value, p.timestamp]);

export function assertValid(points: MetricPoint[]): void {
  for (const p of points) {
    assert.ok(Number.isFinite(p.value), `finite value for ${p.name}`);
    assert.ok(Number.isInteger(p.timestamp), `integer timestamp for ${p.name}`);
    assert.type(p.name, 'string');
    assert.ok(Array.isArray(p.tags));
  }
}
