/** bench results: knobs (environment) and goals of the result-ingest benchmark (issue 5). */

export interface ResultsConfig {
  /** Simulated agents, spread round-robin over the backends of a run. */
  agents: number;
  /** Un-acked events each agent keeps in flight (closed loop). */
  window: number;
  /** Check names each agent cycles through. */
  checks: number;
  warmupSeconds: number;
  seconds: number;
  /** Backends per run, e.g. [1, 3]. */
  nodes: number[];
  connectConcurrency: number;
  /** CPU-profile the first backend over the steady window of each run. */
  profile: boolean;
}

export const GOAL_RATE = 16_000;
export const GOAL_P99_MS = 250;

const envNum = (name: string, dflt: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
};

export function resultsConfig(args: string[]): ResultsConfig {
  const nodes = (process.env.BENCH_RESULTS_NODES ?? '1,3').split(',').map(Number);
  if (nodes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(
      `BENCH_RESULTS_NODES must list positive integers, got "${process.env.BENCH_RESULTS_NODES}"`,
    );
  return {
    agents: Math.floor(envNum('BENCH_RESULTS_AGENTS', 200)),
    window: Math.floor(envNum('BENCH_RESULTS_WINDOW', 8)),
    checks: Math.floor(envNum('BENCH_RESULTS_CHECKS', 10)),
    warmupSeconds: envNum('BENCH_RESULTS_WARMUP', 5),
    seconds: envNum('BENCH_RESULTS_SECONDS', 30),
    nodes,
    connectConcurrency: Math.floor(envNum('BENCH_RESULTS_CONNECT_CONCURRENCY', 100)),
    profile: args.includes('--profile') || process.env.BENCH_PROFILE === '1',
  };
}
