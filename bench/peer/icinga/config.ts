/** bench peer icinga: its knobs (environment `BENCH_PEER_*`), defaults as in our own REST benchmark. */

import { envNumber } from '../../lib/env.ts';

export interface IcingaPeerConfig {
  /** Measured window of the passive-result load, and its warm-up before. */
  seconds: number;
  warmupSeconds: number;
  /** Keep-alive HTTPS connections, one request in flight on each (closed loop). */
  connections: number;
  hosts: number;
  /** Passive services per host. */
  services: number;
  /** Wait after the API first answers before reading idle memory (start-up work settles). */
  settleSeconds: number;
  /** Start-ups with the full configuration; the median is reported. */
  startups: number;
}

export function icingaPeerConfig(): IcingaPeerConfig {
  return {
    seconds: envNumber('BENCH_PEER_SECONDS', 20),
    warmupSeconds: envNumber('BENCH_PEER_WARMUP', 5),
    connections: Math.max(1, envNumber('BENCH_PEER_CONNECTIONS', 64)),
    hosts: Math.max(1, envNumber('BENCH_PEER_HOSTS', 1000)),
    services: Math.max(1, envNumber('BENCH_PEER_SERVICES', 10)),
    settleSeconds: envNumber('BENCH_PEER_SETTLE', 10),
    startups: Math.max(1, envNumber('BENCH_PEER_STARTUPS', 3)),
  };
}
