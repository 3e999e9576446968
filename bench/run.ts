/**
 * `make bench`: node --import tsx bench/run.ts [ask] [agents] [rest] [agent] [ttl] [results] [pipeline]
 * [sandbox] [legacy] [legacy-client] [--profile] [--heap]
 *
 * Runs every benchmark in sequence (or those named), prints a figure block per benchmark as it
 * ends, then a summary. Progress notes go to stderr, figures to stdout.
 *
 *   ask      actor ask round trips/s with a state write per ask (counter actor in bench/ask-host.ts),
 *            and keepalives/s to the real entity actor in the backend           (~1.5 min)
 *   agents   N = 1,000 and 10,000 simulated agents over WebSocket against one backend (~2.5 min)
 *   rest     REST API of one backend: event POSTs/s (API key and Bearer), read-after-write GETs, list
 *            pages at 500/s with 10,000 events stored (bench/rest/)                    (~2.5 min)
 *   agent    one real agent: idle CPU/RSS, POST /events accepted and stored per second, outbox
 *            drain rate after a backend outage, StatsD packets/s before loss (bench/agent/) (~2 min)
 *   ttl      check TTL expiry lateness p50/p99 for 1,000 switches on one backend (bench/ttl.ts) (~1 min)
 *   results  check results acked (durable) per second from N agents over WebSocket, W in flight each, on
 *            1 and 3 backends; send-to-ack p50/p99 (bench/results/)                       (~2 min)
 *   pipeline events through a tcp handler and a pipe handler on one backend: handled/s and stored→handled
 *            p50/p99 (bench/pipeline.ts)                                                  (~2 min)
 *   sandbox  JavaScript expressions in this process: evaluations/s with a reused context and with a
 *            context per event, filter applications/s (bench/sandbox.ts)                    (~1 s)
 *   legacy   the legacy API (port 4567) next to core/v2 on one backend: GET /events p50/p99 at 200/s
 *            with 10,000 events stored, whole lists, POST /results/s and core/v2 event POSTs/s over
 *            64 connections (bench/legacy.ts; `make bench-legacy`)                         (~3 min)
 *   legacy-client  a legacy client's TCP socket and HTTP socket next to a current agent's TCP socket
 *            and API: answered/s, p50/p99 and drain time (bench/legacy-client.ts; `make bench-legacy`) (~2 min)
 *   --profile  CPU-profile the ask host (c=256 window), the keepalive backend, the agents backend
 *              (steady windows only) and the rest backend (an extra window per phase) and print
 *              their top self-time functions
 *   --heap     heap-snapshot the agents backend after each steady window (and the rest backend after
 *              its POST windows) and print its make-up
 *
 * Knobs (environment): BENCH_ASK_LEVELS=64,256,1024  BENCH_KEEPALIVE_LEVELS=256
 * BENCH_ASK_ACTORS=2000  BENCH_ASK_SECONDS=15  BENCH_ASK_WARMUP=3  BENCH_AGENTS=1000,10000
 * BENCH_CONNECT_CONCURRENCY=500  BENCH_STEADY_SECONDS=60  BENCH_STORM=1  BENCH_PROFILE_LEVEL=256
 * BENCH_BACKEND_NODE_OPTIONS='--max-old-space-size=256' (extra node flags for the backends)
 * rest: BENCH_REST_SECONDS=20  BENCH_REST_WARMUP=5  BENCH_REST_RUNS=2  BENCH_REST_AUTH=key,bearer
 * BENCH_REST_CONNECTIONS=64  BENCH_REST_ENTITIES=1000  BENCH_REST_CHECKS=10  BENCH_REST_RAW_SAMPLE=100
 * BENCH_REST_RAW_RATE=500  BENCH_REST_LIST_RATE=500  BENCH_REST_LIST_LIMIT=100  BENCH_REST_LIST_PAGES=5
 * BENCH_REST_CLIENT=raw|node (bench/lib/http1.ts or node:http with a keep-alive Agent)
 * agent: BENCH_AGENT_PHASES=idle,post,drain,statsd  BENCH_AGENT_CONNECTIONS=32  BENCH_AGENT_SECONDS=15
 * BENCH_AGENT_DRAIN_EVENTS=20000  BENCH_STATSD_RATES=25000,50000,100000,150000,200000 (bench/agent/config.ts)
 * ttl: BENCH_TTL_SWITCHES=1000  BENCH_TTL_SECONDS=10
 * results: BENCH_RESULTS_AGENTS=200  BENCH_RESULTS_WINDOW=8  BENCH_RESULTS_SECONDS=30  BENCH_RESULTS_WARMUP=5
 * BENCH_RESULTS_NODES=1,3  BENCH_RESULTS_CHECKS=10
 * pipeline: BENCH_PIPELINE_SECONDS=20 BENCH_PIPELINE_KINDS=tcp,pipe BENCH_PIPELINE_PIPE_EVENTS=3000
 * BENCH_PIPELINE_QUEUED=30000 sandbox: BENCH_SANDBOX_EVALS=5000 BENCH_SANDBOX_FRESH=200
 * BENCH_SANDBOX_FILTERS=2000
 * legacy: BENCH_LEGACY_SECONDS=20  BENCH_LEGACY_WARMUP=3  BENCH_LEGACY_CONNECTIONS=64  BENCH_LEGACY_ENTITIES=1000
 * BENCH_LEGACY_CHECKS=10  BENCH_LEGACY_LIST_RATE=200  BENCH_LEGACY_LIST_LIMIT=100 (0: whole list)  BENCH_LEGACY_FULL_RATE=2
 * legacy-client: BENCH_LEGACY_CLIENT_CONCURRENCY=16  BENCH_LEGACY_CLIENT_SECONDS=15  BENCH_LEGACY_CLIENT_WARMUP=3
 * BENCH_LEGACY_CLIENT_CHECKS=100
 *
 * Every process started (etcd, nats-server, the ask host, backends) is stopped at the end of its
 * benchmark, and by the test harness's exit hook on failure or Ctrl-C.
 *
 * Backends and agents are the compiled programs (docs/operations.md#compiled-programs): importing the
 * test harness rebuilds dist/ first when it is not the build of the current sources. Their CPU
 * profiles (--profile) name lines of dist/*.mjs, not of the sources.
 */
import { etcdBinary, natsBinary } from '../test/harness/index.ts';
import { askConfig, runAsk } from './ask.ts';
import { agentsConfig, runAgents } from './agents.ts';
import { restConfig, runRest } from './rest/index.ts';
import { agentBenchConfig, runAgentBench } from './agent/index.ts';
import { runTtl, ttlConfig } from './ttl.ts';
import { resultsConfig, runResults } from './results/index.ts';
import { pipelineConfig, runPipeline } from './pipeline.ts';
import { runSandbox, sandboxConfig } from './sandbox.ts';
import { legacyBenchConfig, runLegacy } from './legacy.ts';
import { legacyClientBenchConfig, runLegacyClient } from './legacy-client.ts';
import { codecConfig, runCodec } from './codec.ts';
import { hopConfig, runHop } from './hop.ts';
import { block, note } from './lib/format.ts';
import { describeMachine } from './lib/machine.ts';
import type { BenchResult } from './lib/result.ts';

const BENCHES: Record<string, (args: string[]) => Promise<BenchResult>> = {
  ask: (args) => runAsk(askConfig(args)),
  agents: (args) => runAgents(agentsConfig(args)),
  rest: (args) => runRest(restConfig(args)),
  agent: () => runAgentBench(agentBenchConfig()),
  ttl: () => runTtl(ttlConfig()),
  results: (args) => runResults(resultsConfig(args)),
  pipeline: (args) => runPipeline(pipelineConfig(args)),
  sandbox: () => runSandbox(sandboxConfig()),
  legacy: () => runLegacy(legacyBenchConfig()),
  'legacy-client': () => runLegacyClient(legacyClientBenchConfig()),
  codec: () => runCodec(codecConfig()),
  hop: () => runHop(hopConfig()),
};

const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith('-'));
const unknown = named.filter((a) => !(a in BENCHES));
if (unknown.length) {
  process.stderr.write(
    `bench: unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`,
  );
  process.exit(2);
}
const selected = named.length ? named : Object.keys(BENCHES);

process.on('unhandledRejection', (err) => {
  process.stderr.write(`[bench] unhandled rejection: ${(err as Error)?.stack ?? String(err)}\n`);
});

let bins: { etcd?: string; nats?: string } = {};
try {
  bins = { etcd: etcdBinary(), nats: natsBinary() };
} catch (err) {
  note((err as Error).message);
}
const started = Date.now();
process.stdout.write(block(`machine (${new Date().toISOString()})`, describeMachine(bins)) + '\n');

const summary: string[] = [];
let failed = 0;
for (const name of selected) {
  const t = Date.now();
  try {
    const r = await BENCHES[name]!(args);
    process.stdout.write(block(`${r.title} (${((Date.now() - t) / 1000).toFixed(0)} s)`, r.lines) + '\n');
    summary.push(...r.summary);
    if (r.summary.some((l) => l.includes('FAILED'))) failed++;
  } catch (err) {
    failed++;
    const msg = (err as Error)?.stack ?? String(err);
    process.stdout.write(block(`${name}: FAILED`, [msg]) + '\n');
    summary.push(`${name}: FAILED: ${(err as Error)?.message?.split('\n')[0] ?? String(err)}`);
  }
}

process.stdout.write(
  block(`summary (${((Date.now() - started) / 1000).toFixed(0)} s in all)`, summary) + '\n',
);
process.exit(failed ? 1 : 0);
