// One metric point as the parsers of every output format produce it.

export interface MetricTag {
  name: string;
  value: string;
}
export interface MetricPoint {
  name: string;
  value: number;
  timestamp: number;
  tags: MetricTag[];
}
