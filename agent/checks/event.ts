import type { Event } from '../../proto/schemas/event.ts';
import type { RequestCheckConfig } from '../../proto/schemas/check-request.ts';
import type { Logger } from '../../lib/log.ts';
import { evaluateThresholds } from './thresholds.ts';
import type { MetricPoint } from '../metrics/point.ts';

// The event a check execution produces (docs/compatibility.md#check-execution): the request's configuration
// plus what happened; metrics are extracted from the full output before `max_output_size` and
// `discard_output` shorten it, so a metrics-only check can still drop its text.

import type { extractMetrics } from '../metrics/index.ts';

/** The metric-extraction seam (agent/metrics): parses `output` in `format` into points. */
export type ExtractMetrics = typeof extractMetrics;

/** A hook's result as Sensu shows it: the hook's configuration inline, then what the run gave. */
export interface HookResult {
  [field: string]: unknown;
  executed: number;
  issued: number;
  output: string;
  status: number;
  duration: number;
}

export interface Execution {
  status: number;
  output: string;
  executed: number;
  /** Seconds. */
  duration: number;
}

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
function truncateBytes(s: string, max: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return s;
  let end = max;
  // Back off continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

export function buildCheckEvent(o: {
  config: RequestCheckConfig;
  issued: number;
  run: Execution;
  hooks?: HookResult[];
  extractMetrics?: ExtractMetrics;
  log?: Logger;
}): Event {
  const { config, run } = o;
  let metrics: (Event['metrics'] & { points: MetricPoint[] }) | undefined;
  const format = config.output_metric_format;
  if (format && o.extractMetrics) {
    try {
      const { points, errors } = o.extractMetrics(format, run.output, {
        executed: run.executed,
        tags: config.output_metric_tags ?? [],
      });
      if (errors.length)
        o.log?.warn('check output lines not understood as metrics', {
          check: config.metadata.name,
          format,
          errors: errors.slice(0, 5),
          count: errors.length,
        });
      metrics = {
        points,
        ...(config.output_metric_handlers?.length ? { handlers: config.output_metric_handlers } : {}),
      };
    } catch (e) {
      o.log?.warn('cannot extract metrics from check output', {
        check: config.metadata.name,
        format,
        error: (e as Error).message,
      });
    }
  } else if (format) {
    o.log?.debug('metric extraction is not available; output_metric_format ignored', {
      check: config.metadata.name,
      format,
    });
  }
  // Thresholds judge the points just extracted; they may raise the status, never lower it.
  let status = run.status;
  let annotations = config.metadata.annotations;
  if (metrics && config.output_metric_thresholds?.length) {
    const judged = evaluateThresholds(config.output_metric_thresholds, metrics.points, status);
    status = judged.status;
    if (Object.keys(judged.annotations).length) annotations = { ...annotations, ...judged.annotations };
  }
  let output = run.output;
  if (config.max_output_size && config.max_output_size > 0)
    output = truncateBytes(output, config.max_output_size);
  if (config.discard_output) output = '';
  const check = {
    ...config,
    ...(annotations !== config.metadata.annotations ? { metadata: { ...config.metadata, annotations } } : {}),
    issued: o.issued,
    executed: run.executed,
    duration: run.duration,
    status,
    output,
    ...(o.hooks?.length ? { hooks: o.hooks } : {}),
  };
  return { check: check as Event['check'], ...(metrics ? { metrics } : {}) };
}
