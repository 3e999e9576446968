/** bench rest: its configuration (environment knobs and flags), goals and constants. */
import type { ClientKind } from '../lib/http1.ts';

export interface RestConfig {
  entities: number;
  checks: number;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  runs: number;
  auth: Array<'key' | 'bearer'>;
  /** During the POST windows, one request in this many is followed by a GET of its event (0: none). */
  rawSample: number;
  /** Open-loop POSTs/s of the read-after-write phase, each followed by a GET (0: skip the phase). */
  rawRate: number;
  /** Open-loop list requests/s (0: skip the phase). */
  listRate: number;
  listLimit: number;
  /** Pages cycled through: the first, then the next ones by their continue token. */
  listPages: number;
  client: ClientKind;
  /** An extra, CPU-profiled window per phase (figures shown, not used for the goals). */
  profile: boolean;
  /** Heap-snapshot the backend after the POST windows and print its make-up by constructor. */
  heap: boolean;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);

export function restConfig(args: string[]): RestConfig {
  const auth = (process.env.BENCH_REST_AUTH ?? 'key,bearer')
    .split(',')
    .filter((a): a is 'key' | 'bearer' => a === 'key' || a === 'bearer');
  return {
    entities: envNum('BENCH_REST_ENTITIES', 1000),
    checks: envNum('BENCH_REST_CHECKS', 10),
    connections: envNum('BENCH_REST_CONNECTIONS', 64),
    warmupSeconds: envNum('BENCH_REST_WARMUP', 5),
    seconds: envNum('BENCH_REST_SECONDS', 20),
    runs: envNum('BENCH_REST_RUNS', 2),
    auth: auth.length ? auth : ['key'],
    rawSample: envNum('BENCH_REST_RAW_SAMPLE', 100),
    rawRate: envNum('BENCH_REST_RAW_RATE', 500),
    listRate: envNum('BENCH_REST_LIST_RATE', 500),
    listLimit: envNum('BENCH_REST_LIST_LIMIT', 100),
    listPages: envNum('BENCH_REST_LIST_PAGES', 5),
    client: process.env.BENCH_REST_CLIENT === 'node' ? 'node' : 'raw',
    profile: args.includes('--profile') || process.env.BENCH_PROFILE === '1',
    heap: args.includes('--heap') || process.env.BENCH_HEAP === '1',
  };
}

export const GOAL_POST_RATE = 10_000;
export const GOAL_RAW_P99_MS = 3;
export const GOAL_LIST_P99_MS = 20;
export const API = '/api/core/v2/namespaces/default';
