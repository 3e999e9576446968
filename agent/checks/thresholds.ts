import type { MetricThreshold } from '../../proto/schemas/metric-thresholds.ts';
import type { MetricPoint, MetricTag } from '../metrics/point.ts';

// `output_metric_thresholds` (docs/compatibility.md#output-metric-thresholds): evaluated on the agent, on
// the points just extracted from the output, as the reference's agent does. A threshold names a metric
// (and optionally tags the point must carry); each of its rules gives the range [min, max] that is fine
// and the status of a value outside it; `null_status` is the status when no point matches. The check's
// status is only ever raised, and every breach is explained in an annotation.

/** The annotation prefixes (Sensu's `sensu.io/` with our name, docs/compatibility.md#naming). */
const THRESHOLD_ANNOTATION = 'monitor.io/output_metric_thresholds/';
const NOTIFICATION_ANNOTATION = 'monitor.io/notifications/';

interface ThresholdOutcome {
  status: number;
  annotations: Record<string, string>;
}

/** A status as the word the annotations use. */
function statusCaption(status: number): string {
  return status === 0 ? 'ok' : status === 1 ? 'warning' : status === 2 ? 'critical' : 'unknown';
}

const tagText = (tags: MetricTag[]) => tags.map((t) => `${t.name}=${t.value}`).join(', ');
const hasTags = (p: MetricPoint, tags: MetricTag[]) =>
  tags.every((t) => p.tags.some((pt) => pt.name === t.name && pt.value === t.value));
const bound = (s: string | undefined) => (s === undefined || s.trim() === '' ? undefined : Number(s));

export function evaluateThresholds(
  thresholds: readonly MetricThreshold[],
  points: readonly MetricPoint[],
  status: number,
): ThresholdOutcome {
  const texts = new Map<string, string[]>();
  let raised = status;
  const breach = (key: string, level: number, text: string) => {
    if (level <= 0) return;
    const caption = statusCaption(level);
    for (const k of [`${THRESHOLD_ANNOTATION}${key}/${caption}`, `${NOTIFICATION_ANNOTATION}${caption}`]) {
      const list = texts.get(k) ?? [];
      if (!list.includes(text)) list.push(text);
      texts.set(k, list);
    }
    if (level > raised) raised = level;
  };
  for (const t of thresholds) {
    const tags = t.tags ?? [];
    const id = t.name + tags.map((tag) => `.${tag.name}=${tag.value}`).join('');
    const what = tags.length ? `${t.name} (${tagText(tags)})` : t.name;
    const matching = points.filter((p) => p.name === t.name && hasTags(p, tags));
    if (matching.length === 0) {
      breach(
        `${id}/null-status`,
        t.null_status ?? 0,
        `${what} is not among the check's metrics: status ${t.null_status}`,
      );
      continue;
    }
    for (const p of matching)
      for (const rule of t.thresholds ?? []) {
        const min = bound(rule.min);
        const max = bound(rule.max);
        if (min !== undefined && p.value < min)
          breach(
            `${id}/min`,
            rule.status,
            `${what} is ${p.value}, below the minimum of ${rule.min!.trim()}: status ${rule.status}`,
          );
        else if (max !== undefined && p.value > max)
          breach(
            `${id}/max`,
            rule.status,
            `${what} is ${p.value}, above the maximum of ${rule.max!.trim()}: status ${rule.status}`,
          );
      }
  }
  const annotations: Record<string, string> = {};
  for (const [k, list] of texts) annotations[k] = list.join('; ');
  return { status: raised, annotations };
}
