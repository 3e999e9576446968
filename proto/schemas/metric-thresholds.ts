import * as v from 'valibot';
import { UInt } from './common.ts';

// A check's `output_metric_thresholds` (core/v2 MetricThreshold), shared by the check resource and
// the check request the agent evaluates it from (docs/compatibility.md#output-metric-thresholds).

/** A bound is a decimal number as text, or empty for none (Sensu keeps them as strings). */
const Bound = v.optional(
  v.pipe(
    v.string(),
    v.check(
      (s) => s.trim() === '' || Number.isFinite(Number(s)),
      'a threshold min or max is a number written as a string, such as "90" or "0.5"',
    ),
  ),
);

const Status = v.pipe(UInt, v.maxValue(255, 'a threshold status is 0 to 255'));

const Rule = v.pipe(
  v.object({ min: Bound, max: Bound, status: Status }),
  v.check(
    (r) => (r.min ?? '').trim() !== '' || (r.max ?? '').trim() !== '',
    'a threshold needs a min or a max',
  ),
  v.check(
    (r) => (r.min ?? '').trim() === '' || (r.max ?? '').trim() === '' || Number(r.min) <= Number(r.max),
    'a threshold min must not be above its max',
  ),
);

export const MetricThreshold = v.object({
  name: v.pipe(v.string(), v.minLength(1, 'a metric threshold needs the metric name')),
  tags: v.optional(v.nullable(v.array(v.object({ name: v.string(), value: v.string() })))),
  null_status: v.optional(Status),
  thresholds: v.optional(v.nullable(v.array(Rule))),
});
export type MetricThreshold = v.InferOutput<typeof MetricThreshold>;

export const MetricThresholds = v.optional(v.nullable(v.array(MetricThreshold)));
