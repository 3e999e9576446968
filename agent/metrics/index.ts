import { parseGraphite } from './graphite.ts';
import { parseInflux } from './influxdb.ts';
import { parseNagios } from './nagios.ts';
import { parseOpenTSDB } from './opentsdb.ts';
import { parsePrometheus } from './prometheus.ts';
import type { MetricPoint, MetricTag } from './point.ts';
import { METRIC_FORMATS, type MetricFormat } from '../../proto/schemas/resources/checks.ts';

// Metric extraction: turns a check's output into metric points (docs/compatibility.md#metric-extraction).
// Pure and synchronous; bad output never throws: unparsable lines are skipped and described in `errors` (at
// most 20, then a count). Every point has a finite value and a whole-second timestamp, and the check's
// `output_metric_tags` are appended after the point's own tags.

type Parser = (
  output: string,
  executed: number,
  tags: MetricTag[],
) => { points: MetricPoint[]; errors: string[] };

const PARSERS: Record<MetricFormat, Parser> = {
  nagios_perfdata: parseNagios,
  graphite_plaintext: parseGraphite,
  influxdb_line: parseInflux,
  opentsdb_line: parseOpenTSDB,
  prometheus_text: parsePrometheus,
};

function isMetricFormat(format: string): format is MetricFormat {
  return Object.prototype.hasOwnProperty.call(PARSERS, format);
}

export function extractMetrics(
  format: string,
  output: string,
  opts: { executed: number; tags?: MetricTag[] },
): { points: MetricPoint[]; errors: string[] } {
  if (!isMetricFormat(format)) {
    return {
      points: [],
      errors: [
        `unknown output_metric_format ${JSON.stringify(format)} (want one of ${METRIC_FORMATS.join(', ')})`,
      ],
    };
  }
  if (typeof output !== 'string' || output === '') return { points: [], errors: [] };
  const executed = Number.isFinite(opts.executed) ? Math.floor(opts.executed) : Math.floor(Date.now() / 1000);
  return PARSERS[format](output, executed, opts.tags ?? []);
}
