/**
 * Agent capacity: N simulated agents in this one process, each a real WebSocket (`ws`) against a
 * real backend (bin/monitor-backend with external etcd/nats from the test harness), doing the
 * agent handshake and sending a keepalive frame at once and then every 20 s, the agents' phases
 * spread over the 20 s. For each N: time to connect all (bounded connects in flight), connected
 * agents as the backend reports them, then over a steady window the backend's RSS and CPU, those
 * of nats-server and etcd, keepalives applied (runtime.committed_turns) and event-loop delay
 * (a preload module, bench/lib/loop-lag-preload.mjs, injected with NODE_OPTIONS).
 * The simulated agents are in bench/agents/connect.ts, the report of the runs in bench/agents/report.ts.
 */
import { startBackend, waitFor } from '../test/harness/index.ts';
import {
  heapSnapshot,
  instrumentation,
  loopReports,
  memoryAfterGc,
  startProfile,
} from './lib/backend-ctl.ts';
import { SHARD_COUNT } from '../proto/names.ts';
import { ms, note, secs } from './lib/format.ts';
import { Cleanup, sleep, startInfra } from './lib/infra.ts';
import { maxOpenFiles, openFds, ProcMeter, rssMb } from './lib/procstat.ts';
import type { BenchResult } from './lib/result.ts';
import type { AgentsConfig } from './agents/config.ts';
import { connectAll, describeFailures, SimAgent } from './agents/connect.ts';
import { agentsReport, type RunFigures } from './agents/report.ts';

export { agentsConfig } from './agents/config.ts';

const TICK_MS = 100;

async function runOne(n: number, cfg: AgentsConfig, storm: boolean): Promise<RunFigures> {
  const cleanup = new Cleanup();
  const agents: SimAgent[] = [];
  const fig: RunFigures = {
    n,
    firstHandshakeMs: NaN,
    opened: 0,
    backendConnected: 0,
    backendConnectedSeconds: NaN,
    firstKeepalivesSeconds: NaN,
    keepalivesSent: 0,
    appliedPerSec: NaN,
    closedInWindow: 0,
    loop: { p99Max: NaN, p99Median: NaN, max: NaN },
    idle: { rss: NaN },
    loaded: {},
  };
  let ticker: NodeJS.Timeout | undefined;
  let closed = 0;
  try {
    const limit = maxOpenFiles();
    if (limit !== undefined && limit < n + 200)
      throw new Error(
        `this process may open only ${limit} files; ${n} agents need about ${n + 200} (raise ulimit -n)`,
      );

    note(`agents N=${n}: starting etcd, nats-server and the backend`);
    const infra = await startInfra();
    cleanup.add('etcd', () => infra.etcd.stop());
    cleanup.add('nats', () => infra.nats.stop());
    const ctl = instrumentation();
    let backend = await startBackend({
      name: 'bench-agents',
      etcdUrl: infra.etcd.url,
      natsUrl: infra.nats.url,
      logLevel: 'warn',
      readyTimeoutMs: 60_000,
      env: ctl.env,
    });
    cleanup.add('backend', () => backend.stop(20_000));
    cleanup.add('agent sockets', async () => {
      for (const a of agents) a.ws?.terminate();
    });
    const backendLimit = maxOpenFiles(backend.proc.pid);
    if (backendLimit !== undefined && backendLimit < n + 200)
      note(`agents: the backend may open only ${backendLimit} files; expect refusals past that`);
    const health = async () =>
      (await backend.health()).body as {
        shards: { owned: number };
        agents: { connected: number };
        runtime: { committed_turns: number };
      };
    await waitFor(async () => (await health()).shards.owned === SHARD_COUNT, {
      timeoutMs: 60_000,
      what: 'the backend to own every shard',
    });
    await sleep(2000);
    fig.idle.rss = rssMb(backend.proc.pid) ?? NaN;
    fig.idle.afterGc = await memoryAfterGc(backend, ctl);

    // --- connect ------------------------------------------------------------------------------
    for (let i = 0; i < n; i++) agents.push(new SimAgent(i, `bench-${i}`));
    const turns0 = (await health()).runtime.committed_turns;
    const onClose = () => {
      closed++;
    };
    const t0 = performance.now();
    const first = await connectAll(backend.agentUrl, agents.slice(0, 1), 1, onClose);
    fig.firstHandshakeMs = first.handshake.max;
    if (first.opened !== 1)
      throw new Error(`the first agent could not connect: ${describeFailures(first.failed)}`);
    note(
      `agents N=${n}: first agent connected in ${ms(fig.firstHandshakeMs)}; connecting the others, ${cfg.connectConcurrency} in flight`,
    );
    const connectProf = cfg.profile ? await startProfile(backend, ctl, `backend-${n}-connect`) : undefined;
    const connectMeter = new ProcMeter({ backend: backend.proc.pid, client: process.pid }).start();
    fig.connect = await connectAll(backend.agentUrl, agents.slice(1), cfg.connectConcurrency, onClose);
    fig.connectCpu = connectMeter.stop();
    if (connectProf) fig.connectProfile = await connectProf.stop();
    fig.opened = 1 + fig.connect.opened;
    note(
      `agents N=${n}: ${fig.opened} open, ${n - fig.opened} failed in ${secs(fig.connect.seconds)}${fig.connect.failed.size ? ` (${describeFailures(fig.connect.failed)})` : ''}`,
    );

    // Keepalives every interval; agent i's phase is (i mod slots) ticks, spread over the interval.
    const slots = Math.round((cfg.intervalSeconds * 1000) / TICK_MS);
    const bySlot: SimAgent[][] = Array.from({ length: slots }, () => []);
    for (const a of agents) bySlot[a.index % slots]!.push(a);
    let tick = 0,
      sent = 0;
    ticker = setInterval(() => {
      for (const a of bySlot[tick++ % slots]!) if (a.sendKeepalive()) sent++;
    }, TICK_MS);

    try {
      await waitFor(async () => (await health()).agents.connected >= fig.opened, {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: 'the backend to report every agent connected',
      });
    } catch (err) {
      note(`agents: ${(err as Error).message}`);
    }
    fig.backendConnectedSeconds = (performance.now() - t0) / 1000;
    fig.backendConnected = (await health()).agents.connected;
    try {
      await waitFor(async () => (await health()).runtime.committed_turns - turns0 >= fig.opened, {
        timeoutMs: 120_000,
        intervalMs: 100,
        what: 'the first keepalive of every agent to be applied',
      });
    } catch (err) {
      note(`agents: ${(err as Error).message}`);
    }
    fig.firstKeepalivesSeconds = (performance.now() - t0) / 1000;
    note(
      `agents N=${n}: backend reports ${fig.backendConnected} connected; first keepalives applied after ${secs(fig.firstKeepalivesSeconds)}; settling 5 s`,
    );
    await sleep(5000);

    // --- steady window ------------------------------------------------------------------------
    note(`agents N=${n}: steady window ${cfg.steadySeconds} s`);
    const lagFrom = backend.proc.lineCount;
    const c0 = (await health()).runtime.committed_turns;
    const sent0 = sent,
      closed0 = closed;
    const prof = cfg.profile ? await startProfile(backend, ctl, `backend-${n}-agents`) : undefined;
    const meter = new ProcMeter({
      backend: backend.proc.pid,
      nats: infra.nats.proc.pid,
      etcd: infra.etcd.proc.pid,
      client: process.pid,
    }).start();
    const w0 = performance.now();
    await sleep(cfg.steadySeconds * 1000);
    fig.window = meter.stop();
    if (prof) fig.profile = await prof.stop();
    const c1 = (await health()).runtime.committed_turns;
    fig.appliedPerSec = (c1 - c0) / ((performance.now() - w0) / 1000);
    fig.keepalivesSent = sent - sent0;
    fig.closedInWindow = closed - closed0;
    fig.backendFds = openFds(backend.proc.pid);
    fig.clientFds = openFds(process.pid);
    const lags = loopReports(backend, lagFrom).filter((r) => !r.after_gc);
    const p99s = lags.map((r) => r.p99_ms).sort((a, b) => a - b);
    fig.loopTimeline = lags.map((r) => `${Math.round(r.max_ms)}/${Math.round(r.gc_max_ms)}`).join(' ');
    fig.gcTotalMs = lags.reduce((a, r) => a + r.gc_total_ms, 0);
    fig.loop = {
      p99Max: p99s.length ? p99s[p99s.length - 1]! : NaN,
      p99Median: p99s.length ? p99s[p99s.length >> 1]! : NaN,
      max: lags.length ? Math.max(...lags.map((r) => r.max_ms)) : NaN,
    };
    fig.loaded.afterGc = await memoryAfterGc(backend, ctl);
    if (cfg.heap) fig.heap = await heapSnapshot(backend, ctl, `backend-${n}-agents`);
    fig.backendConnected = Math.min(fig.backendConnected, (await health()).agents.connected);

    // --- restart storm: the backend restarts, every agent reconnects at once ----------------------
    if (storm) {
      note(
        `agents N=${n}: restarting the backend; all agents reconnect (${cfg.connectConcurrency} in flight, cold verification cache)`,
      );
      clearInterval(ticker);
      ticker = undefined;
      await backend.stop(20_000);
      for (const a of agents) {
        a.ws?.terminate();
        a.open = false;
      }
      backend = await startBackend({ ...backend.options, readyTimeoutMs: 60_000 });
      await waitFor(async () => (await health()).shards.owned === SHARD_COUNT, {
        timeoutMs: 60_000,
        what: 'the restarted backend to own every shard',
      });
      const again = await connectAll(backend.agentUrl, agents, cfg.connectConcurrency, onClose);
      fig.storm = { ...again, backendConnected: (await health()).agents.connected };
      note(
        `agents N=${n}: ${again.opened} reconnected in ${secs(again.seconds)}, handshake p50 ${ms(again.handshake.p50)} p99 ${ms(again.handshake.p99)}`,
      );
    }
    return fig;
  } catch (err) {
    fig.error = (err as Error).message;
    return fig;
  } finally {
    if (ticker) clearInterval(ticker);
    note(`agents N=${n}: stopping`);
    await cleanup.run();
  }
}

export async function runAgents(cfg: AgentsConfig): Promise<BenchResult> {
  const results: RunFigures[] = [];
  for (const [i, n] of cfg.counts.entries()) results.push(await runOne(n, cfg, cfg.storm && i === 0));
  return agentsReport(results, cfg);
}
