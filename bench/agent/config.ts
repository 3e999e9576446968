/** bench agent: its configuration (environment knobs), goals and constants. */

const PHASES = ['idle', 'post', 'drain', 'statsd'] as const;
type Phase = (typeof PHASES)[number];

export interface AgentBenchConfig {
  /** Phases to run (BENCH_AGENT_PHASES=idle,post,drain,statsd; default all). */
  phases: Set<Phase>;
  /** Settle time before the idle window, and the idle window itself (seconds). */
  settleSeconds: number;
  idleSeconds: number;
  /** POST /events: keep-alive connections (closed loop), warm-up and measured window (seconds). */
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Outbox drain: events queued while the backend is down. */
  drainEvents: number;
  /** StatsD: offered packets/s per step, seconds per step, distinct counter names. */
  statsdRates: number[];
  statsdSeconds: number;
  statsdNames: number;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);
const envList = (name: string, dflt: number[]) =>
  process.env[name]
    ? process.env[name]!.split(',')
        .map(Number)
        .filter((n) => n > 0)
    : dflt;

export function agentBenchConfig(): AgentBenchConfig {
  const phases = (process.env.BENCH_AGENT_PHASES ?? PHASES.join(','))
    .split(',')
    .filter((p): p is Phase => (PHASES as readonly string[]).includes(p));
  return {
    phases: new Set(phases.length ? phases : PHASES),
    settleSeconds: envNum('BENCH_AGENT_SETTLE', 10),
    idleSeconds: envNum('BENCH_AGENT_IDLE_SECONDS', 10),
    connections: envNum('BENCH_AGENT_CONNECTIONS', 32),
    warmupSeconds: envNum('BENCH_AGENT_WARMUP', 3),
    seconds: envNum('BENCH_AGENT_SECONDS', 15),
    drainEvents: envNum('BENCH_AGENT_DRAIN_EVENTS', 20_000),
    statsdRates: envList('BENCH_STATSD_RATES', [25_000, 50_000, 100_000, 150_000, 200_000]),
    statsdSeconds: envNum('BENCH_STATSD_SECONDS', 5),
    statsdNames: envNum('BENCH_STATSD_NAMES', 4),
  };
}

/** Issue 4's goal: StatsD packets/s the agent takes without losing any (counters exact). */
export const GOAL_STATSD_PPS = 100_000;

/** Relay limits high enough that the relay is never what is measured. */
export const UNLIMITED_RELAY = ['--events-rate-limit', '1000000', '--events-burst-limit', '100000'];

export const CORE_API = '/api/core/v2/namespaces/default';
