/** The knobs of `bench agents` (bench/agents.ts), from the environment and the command line. */

export interface AgentsConfig {
  counts: number[];
  /** Connection attempts in flight at once. */
  connectConcurrency: number;
  steadySeconds: number;
  intervalSeconds: number;
  /** After the first N: restart the backend and time the reconnect of every agent. */
  storm: boolean;
  /** CPU-profile the backend over each steady window and print its top functions. */
  profile: boolean;
  /** Heap-snapshot the backend after each window and print what its heap is made of. */
  heap: boolean;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);

export function agentsConfig(args: string[]): AgentsConfig {
  return {
    counts: process.env.BENCH_AGENTS ? process.env.BENCH_AGENTS.split(',').map(Number) : [1000, 10_000],
    connectConcurrency: envNum('BENCH_CONNECT_CONCURRENCY', 500),
    steadySeconds: envNum('BENCH_STEADY_SECONDS', 60),
    intervalSeconds: 20,
    storm: process.env.BENCH_STORM !== '0',
    profile: args.includes('--profile') || process.env.BENCH_PROFILE === '1',
    heap: args.includes('--heap') || process.env.BENCH_HEAP === '1',
  };
}
