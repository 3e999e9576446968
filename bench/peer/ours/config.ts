/** bench peer, our side: the environment knobs of the memory and start-up measures, with their defaults. */

import { envNumber } from '../../lib/env.ts';

export interface PeerOursConfig {
  /** Memory per monitored object: proxy entities x checks (each check one event). */
  memEntities: number;
  memChecks: number;
  /** Start-up with data stored: proxy entities x checks seeded before the restarts. */
  startEntities: number;
  startChecks: number;
  /** Backend restarts timed on the seeded store (the median is the figure). */
  restarts: number;
  /** Restarts timed on an empty store, for reference (0: skip). */
  emptyRestarts: number;
  /** Wait before reading memory, seconds: lets caches expire and the backend go idle. */
  settleSeconds: number;
  /** Keep-alive connections the events are written over. */
  connections: number;
  /** One more start-up, CPU-profiled (`--cpu-prof`), left out of the median. */
  profile: boolean;
  /** Give up on a start-up milestone after this long, seconds. */
  startTimeoutSeconds: number;
  /**
   * `--cluster-lease-ttl` of the timed backends: the product's default (10 s), not the harness's 5 s,
   * since a start that blocks the event loop longer than the lease loses its session.
   */
  leaseTtlSeconds: number;
}

export function peerOursConfig(args: string[] = []): PeerOursConfig {
  return {
    memEntities: envNumber('BENCH_PEER_MEM_ENTITIES', 1000),
    memChecks: envNumber('BENCH_PEER_MEM_CHECKS', 10),
    startEntities: envNumber('BENCH_PEER_START_ENTITIES', 10_000),
    startChecks: envNumber('BENCH_PEER_START_CHECKS', 10),
    restarts: Math.max(1, envNumber('BENCH_PEER_RESTARTS', 3)),
    emptyRestarts: envNumber('BENCH_PEER_EMPTY_RESTARTS', 3),
    settleSeconds: envNumber('BENCH_PEER_SETTLE', 10),
    connections: Math.max(1, envNumber('BENCH_PEER_CONNECTIONS', 64)),
    profile: args.includes('--profile') || process.env.BENCH_PEER_PROFILE === '1',
    startTimeoutSeconds: envNumber('BENCH_PEER_START_TIMEOUT', 120),
    leaseTtlSeconds: Math.max(1, envNumber('BENCH_PEER_LEASE_TTL', 10)),
  };
}
