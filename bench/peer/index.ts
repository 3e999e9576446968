/**
 * `make bench-peer`: node --import tsx bench/peer/index.ts [--profile]
 *
 * Issue 17's comparison on one machine, in one run: Icinga 2 first (bench/peer/icinga/: installed
 * from Debian's packages when missing, started and stopped by the benchmark, 1,000 hosts x 10
 * passive services), then ours right after with the same load generator and windows: the REST
 * benchmark's event POSTs (one window, API key) with its read-after-write and list phases, the
 * results benchmark on one backend (200 agents), memory per object and start-up with 10,000
 * entities and 100,000 events (bench/peer/ours/), check TTL lateness and the agent's idle RSS and
 * start-up. Prints each block, then the goals table with the ratios (bench/peer/goals.ts) and the
 * machine line. Not part of `make test`; about 12 minutes.
 *
 * Knobs: BENCH_PEER_SKIP=icinga,rest,results,memory,startup,ttl,agent (leave parts out), and those of
 * each part: BENCH_PEER_* (bench/peer/icinga/config.ts, bench/peer/ours/config.ts), BENCH_REST_*,
 * BENCH_RESULTS_*, BENCH_TTL_*, BENCH_AGENT_* (bench/README.md). Defaults set here: one POST window
 * with the API key (BENCH_REST_RUNS=1, BENCH_REST_AUTH=key), the results run on one backend
 * (BENCH_RESULTS_NODES=1), the agent's idle phase only (BENCH_AGENT_PHASES=idle).
 */
import { etcdBinary, natsBinary } from '../../test/harness/index.ts';
import { block, note } from '../lib/format.ts';
import { describeMachine } from '../lib/machine.ts';
import type { BenchResult } from '../lib/result.ts';
import { restConfig, runRest } from '../rest/index.ts';
import { resultsConfig, runResults } from '../results/index.ts';
import { runTtl, ttlConfig } from '../ttl.ts';
import { agentBenchConfig, runAgentBench } from '../agent/index.ts';
import { icingaPeerConfig } from './icinga/config.ts';
import { runIcingaPeer } from './icinga/index.ts';
import { icingaReport } from './icinga/report.ts';
import { peerOursConfig } from './ours/config.ts';
import { measureMemoryPerObject } from './ours/memory.ts';
import { memoryLines, startupLines } from './ours/report.ts';
import { measureStartup } from './ours/startup.ts';
import { goalRows, goalTable, type PeerInputs } from './goals.ts';

const args = process.argv.slice(2);
const skip = new Set((process.env.BENCH_PEER_SKIP ?? '').split(',').filter(Boolean));
const defaults: Record<string, string> = {
  BENCH_REST_RUNS: '1',
  BENCH_REST_AUTH: 'key',
  BENCH_RESULTS_NODES: '1',
  BENCH_AGENT_PHASES: 'idle',
};
for (const [k, v] of Object.entries(defaults)) process.env[k] ??= v;
// The peer's windows are ours: the REST benchmark takes the same seconds, warm-up and connections.
const peerCfg = icingaPeerConfig();
process.env.BENCH_REST_SECONDS ??= String(peerCfg.seconds);
process.env.BENCH_REST_WARMUP ??= String(peerCfg.warmupSeconds);
process.env.BENCH_REST_CONNECTIONS ??= String(peerCfg.connections);
process.env.BENCH_REST_ENTITIES ??= String(peerCfg.hosts);
process.env.BENCH_REST_CHECKS ??= String(peerCfg.services);

let bins: { etcd?: string; nats?: string } = {};
try {
  bins = { etcd: etcdBinary(), nats: natsBinary() };
} catch (err) {
  note((err as Error).message);
}
const machine = describeMachine(bins);
const started = Date.now();
process.stdout.write(block(`machine (${new Date().toISOString()})`, machine) + '\n');

const inputs: PeerInputs = {};
const summary: string[] = [];
let failed = 0;

/** Runs one part, prints its block, keeps its summary; a failure is reported and the run goes on. */
async function part(name: string, run: () => Promise<BenchResult | undefined>): Promise<void> {
  if (skip.has(name)) return;
  const t = Date.now();
  try {
    const r = await run();
    if (!r) return;
    process.stdout.write(block(`${r.title} (${((Date.now() - t) / 1000).toFixed(0)} s)`, r.lines) + '\n');
    summary.push(...r.summary);
    if (r.summary.some((l) => l.includes('FAILED'))) failed++;
  } catch (err) {
    failed++;
    process.stdout.write(block(`${name}: FAILED`, [(err as Error)?.stack ?? String(err)]) + '\n');
    summary.push(`${name}: FAILED: ${(err as Error)?.message?.split('\n')[0] ?? String(err)}`);
  }
}

const figure = (r: BenchResult, name: string): number => {
  const v = r.figures?.[name];
  if (v === undefined) throw new Error(`${r.title}: no figure ${name}`);
  return v;
};

await part('icinga', async () => {
  const f = await runIcingaPeer(peerCfg);
  inputs.icinga = {
    resultsRate: f.results.drive.rate,
    idleKibPerObject: f.memory.idleKibPerObject,
    resultsKibPerObject: f.memory.resultsKibPerObject,
    startupMs: f.startup.medianMs,
    objects: f.hosts + f.services,
  };
  if (f.leftover.length) throw new Error(`icinga2 left running: ${f.leftover.join(', ')}`);
  return icingaReport(f);
});
await part('rest', async () => {
  const r = await runRest(restConfig(args));
  inputs.rest = {
    postRate: figure(r, 'post_rate'),
    postP99Ms: figure(r, 'post_p99_ms'),
    rawGetP99Ms: figure(r, 'raw_get_p99_ms'),
    listP99Ms: figure(r, 'list_p99_ms'),
  };
  return r;
});
await part('results', async () => {
  const r = await runResults(resultsConfig(args));
  inputs.results = { rate: figure(r, 'results_rate'), p99Ms: figure(r, 'results_p99_ms') };
  return r;
});
const oursCfg = peerOursConfig(args);
await part('memory', async () => {
  const f = await measureMemoryPerObject(oursCfg);
  inputs.memory = {
    idleKibPerObject: f.perObject.totalKb,
    rewrittenKibPerObject: f.perObjectRewritten.totalKb,
    objects: f.objects,
  };
  return {
    title: 'peer (ours): memory per monitored object',
    lines: memoryLines(f),
    summary: [],
  };
});
await part('startup', async () => {
  const f = await measureStartup(oursCfg);
  inputs.startup = {
    readyMs: f.stored.median.readyMs,
    listWithDataMs: f.stored.median.listWithDataMs,
    events: f.stored.events,
    entities: f.stored.entities,
  };
  return { title: 'peer (ours): start-up to a ready API', lines: startupLines(f), summary: [] };
});
await part('ttl', async () => {
  const r = await runTtl(ttlConfig());
  inputs.ttl = { lateP99Ms: figure(r, 'ttl_late_p99_ms') };
  return r;
});
await part('agent', async () => {
  const r = await runAgentBench(agentBenchConfig());
  inputs.agent = { idleRssMb: figure(r, 'agent_idle_rss_mb'), readyMs: figure(r, 'agent_ready_ms') };
  return r;
});

process.stdout.write(
  block(
    `issue 17 goals beside Icinga 2, same machine, same run (${((Date.now() - started) / 1000).toFixed(0)} s in all)`,
    [goalTable(goalRows(inputs)), '', `machine: ${machine.map((l) => l.replace(/\s+/g, ' ')).join('; ')}`],
  ) + '\n',
);
process.stdout.write(block('summary', summary) + '\n');
process.exit(failed ? 1 : 0);
