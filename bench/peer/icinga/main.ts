/**
 * The Icinga 2 side of `make bench-peer` alone: `node --import tsx bench/peer/icinga/main.ts`.
 * Knobs: BENCH_PEER_SECONDS=20 BENCH_PEER_WARMUP=5 BENCH_PEER_CONNECTIONS=64 BENCH_PEER_HOSTS=1000
 * BENCH_PEER_SERVICES=10 (per host) BENCH_PEER_SETTLE=10 BENCH_PEER_STARTUPS=3. Progress notes go to
 * stderr, figures to stdout; exit 1 on failure or when an icinga2 process was left running.
 */
import { block } from '../../lib/format.ts';
import { describeMachine } from '../../lib/machine.ts';
import { icingaPeerConfig } from './config.ts';
import { runIcingaPeer } from './index.ts';
import { icingaReport } from './report.ts';

process.stdout.write(block(`machine (${new Date().toISOString()})`, describeMachine({})) + '\n');
const t = Date.now();
try {
  const figures = await runIcingaPeer(icingaPeerConfig());
  const r = icingaReport(figures);
  process.stdout.write(
    block(`${r.title} (${((Date.now() - t) / 1000).toFixed(0)} s)`, [...r.lines, '', ...r.summary]) + '\n',
  );
  process.exit(figures.leftover.length ? 1 : 0);
} catch (err) {
  process.stdout.write(block('peer: Icinga 2: FAILED', [(err as Error)?.stack ?? String(err)]) + '\n');
  process.exit(1);
}
