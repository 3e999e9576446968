/** What each benchmark hands back to bench/run.ts. */
export interface BenchResult {
  title: string;
  /** The figure block, printed as soon as the benchmark ends. */
  lines: string[];
  /** One line per headline figure, for the final summary table. */
  summary: string[];
}
