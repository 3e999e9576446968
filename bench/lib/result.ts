/** What each benchmark hands back to bench/run.ts. */
export interface BenchResult {
  title: string;
  /** The figure block, printed as soon as the benchmark ends. */
  lines: string[];
  /** One line per headline figure, for the final summary table. */
  summary: string[];
  /**
   * Headline figures by name (e.g. `post_rate`, `results_p99_ms`), for `make bench-peer`, which runs
   * the same benchmarks and puts their figures beside the peer's (bench/peer/).
   */
  figures?: Record<string, number>;
}
