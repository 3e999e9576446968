/**
 * Agent capacity: N simulated agents in this one process, each a real WebSocket (`ws`) against a
 * real backend (bin/monitor-backend with external etcd/nats from the test harness), doing the
 * agent handshake and sending a keepalive frame at once and then every 20 s, the agents' phases
 * spread over the 20 s. For each N: time to connect all (bounded connects in flight), connected
 * agents as the backend reports them, then over a steady window the backend's RSS and CPU, those
 * of nats-server and etcd, keepalives applied (runtime.committed_turns) and event-loop delay
 * (a preload module, bench/lib/loop-lag-preload.mjs, injected with NODE_OPTIONS).
 */
import WebSocket from 'ws';
import { startBackend, waitFor } from '../test/harness/index.ts';
import {
  heapSnapshot,
  instrumentation,
  loopReports,
  memoryAfterGc,
  profileLines,
  startProfile,
  type LoopReport,
} from './lib/backend-ctl.ts';
import { summarizeHeap } from './lib/heapsnapshot.ts';
import { encodeFrame, jsonCodec } from '../proto/frames.ts';
import { SHARD_COUNT } from '../proto/names.ts';
import { keepaliveEvent } from './lib/keepalive.ts';
import { fix, int, mb, ms, note, pct, secs, table } from './lib/format.ts';
import { Cleanup, sleep, startInfra } from './lib/infra.ts';
import { maxOpenFiles, openFds, ProcMeter, rssMb, type WindowFigures } from './lib/procstat.ts';
import type { BenchResult } from './lib/result.ts';
import { Samples } from './lib/stats.ts';

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

const AUTH = 'Basic ' + Buffer.from('agent:P@ssw0rd!').toString('base64');
const TICK_MS = 100;

class SimAgent {
  ws: WebSocket | undefined;
  open = false;
  seq = 0;
  constructor(
    readonly index: number,
    readonly name: string,
  ) {}

  sendKeepalive(): boolean {
    if (!this.open || !this.ws) return false;
    this.ws.send(encodeFrame('keepalive', jsonCodec.encode(keepaliveEvent(this.name, ++this.seq))));
    return true;
  }
}

interface ConnectFigures {
  seconds: number;
  opened: number;
  failed: Map<string, number>;
  handshake: ReturnType<Samples['summary']>;
}

/** Connects `list` with at most `concurrency` handshakes in flight; each agent sends a keepalive once open. */
async function connectAll(
  url: string,
  list: SimAgent[],
  concurrency: number,
  onClose: (a: SimAgent) => void,
): Promise<ConnectFigures> {
  const failed = new Map<string, number>();
  const handshake = new Samples();
  let opened = 0;
  const connectOne = (a: SimAgent) =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const ws = new WebSocket(url, {
        headers: {
          'Monitor-Namespace': 'default',
          'Monitor-AgentName': a.name,
          'Monitor-Subscriptions': 'linux',
          Authorization: AUTH,
        },
        perMessageDeflate: false,
        handshakeTimeout: 60_000,
      });
      a.ws = ws;
      let settled = false;
      const fail = (reason: string) => {
        if (!settled) {
          settled = true;
          failed.set(reason, (failed.get(reason) ?? 0) + 1);
          resolve();
        }
      };
      ws.on('open', () => {
        settled = true;
        a.open = true;
        opened++;
        handshake.add(performance.now() - t);
        a.sendKeepalive();
        resolve();
      });
      ws.on('unexpected-response', (_req, res) => {
        fail(`HTTP ${res.statusCode}`);
        ws.terminate();
      });
      ws.on('error', (err) => fail((err as NodeJS.ErrnoException).code ?? err.message));
      ws.on('close', () => {
        if (a.ws === ws && a.open) {
          a.open = false;
          onClose(a);
        }
        fail('closed before open');
      });
    });
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, list.length) }, async () => {
      while (next < list.length) await connectOne(list[next++]!);
    }),
  );
  return { seconds: (performance.now() - t0) / 1000, opened, failed, handshake: handshake.summary() };
}

const describeFailures = (failed: Map<string, number>) =>
  [...failed].map(([k, v]) => `${k} x${v}`).join(', ');

interface RunFigures {
  n: number;
  /** The first agent alone: its handshake pays the password KDF (cold verification cache). */
  firstHandshakeMs: number;
  /** The other N-1 agents, verification cache warm. */
  connect?: ConnectFigures;
  /** CPU of the backend and of this process while the N-1 connected. */
  connectCpu?: WindowFigures;
  opened: number;
  backendConnected: number;
  backendConnectedSeconds: number;
  firstKeepalivesSeconds: number;
  window?: WindowFigures;
  keepalivesSent: number;
  appliedPerSec: number;
  closedInWindow: number;
  loop: { p99Max: number; p99Median: number; max: number };
  idle: { rss: number; afterGc?: LoopReport };
  loaded: { afterGc?: LoopReport };
  backendFds?: number;
  clientFds?: number;
  /** Per 5 s of the window: worst event-loop delay / longest GC pause, ms. */
  loopTimeline?: string;
  gcTotalMs?: number;
  /** Heap snapshot of the backend after the window (--heap). */
  heap?: string;
  /** CPU profile of the backend while the N-1 agents connected (--profile). */
  connectProfile?: string;
  /** CPU profile of the backend over the steady window (--profile). */
  profile?: string;
  /** Reconnect of every agent to a restarted backend (cold verification cache). */
  storm?: ConnectFigures & { backendConnected: number };
  error?: string;
}

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

  const lines: string[] = [
    `one backend (log level warn), external etcd + nats-server; agents in this process over ws://, keepalive every ${cfg.intervalSeconds} s (phases spread)`,
    `connect: the first agent alone (pays the password KDF), then the other N-1 with ${cfg.connectConcurrency} in flight (verification cache warm)`,
    `steady window ${cfg.steadySeconds} s; CPU in % of one core; RSS sampled every second (avg / max); RSS/agent = RSS growth after forced GC / agents;`,
    `loop = backend event-loop delay p99 per 5 s (median / worst) and max (bench/lib/loop-lag-preload.mjs)`,
    '',
  ];
  const summary: string[] = [];
  const p = (f: RunFigures, name: string) => f.window?.procs[name];
  lines.push(
    table(
      [
        'agents',
        'open',
        'first agent',
        'connect N-1',
        'per s',
        'CPU backend/client',
        'handshake p50/p99',
        'backend sees',
        'first KA applied',
        'KA applied/s',
        'KA sent/s',
        'closed',
      ],
      results.map((f) => [
        int(f.n),
        int(f.opened),
        ms(f.firstHandshakeMs),
        secs(f.connect?.seconds ?? NaN),
        int((f.connect?.opened ?? NaN) / (f.connect?.seconds ?? NaN)),
        `${pct(f.connectCpu?.procs.backend?.cpuPct ?? NaN)} / ${pct(f.connectCpu?.procs.client?.cpuPct ?? NaN)}`,
        `${ms(f.connect?.handshake.p50 ?? NaN)} / ${ms(f.connect?.handshake.p99 ?? NaN)}`,
        int(f.backendConnected),
        secs(f.firstKeepalivesSeconds),
        fix(f.appliedPerSec, 0),
        fix(f.keepalivesSent / cfg.steadySeconds, 0),
        int(f.closedInWindow),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    table(
      [
        'agents',
        'backend CPU',
        'backend RSS avg/max',
        'idle RSS',
        'RSS after GC',
        'heap used/total after GC',
        'RSS/agent',
        'loop p99 (med/worst)',
        'loop max',
        'nats CPU',
        'nats RSS',
        'etcd CPU',
        'etcd RSS',
        'client CPU',
        'steal',
      ],
      results.map((f) => {
        const b = p(f, 'backend');
        const perAgent =
          f.loaded.afterGc && f.idle.afterGc
            ? ((f.loaded.afterGc.rss_mb - f.idle.afterGc.rss_mb) * 1024) / Math.max(1, f.opened)
            : NaN;
        return [
          int(f.n),
          pct(b?.cpuPct ?? NaN),
          `${mb(b?.rssAvgMb ?? NaN)} / ${mb(b?.rssMaxMb ?? NaN)}`,
          mb(f.idle.rss),
          mb(f.loaded.afterGc?.rss_mb ?? NaN),
          `${mb(f.loaded.afterGc?.heap_used_mb ?? NaN)} / ${mb(f.loaded.afterGc?.heap_total_mb ?? NaN)}`,
          Number.isFinite(perAgent) ? `${fix(perAgent, 1)} KB` : '-',
          `${ms(f.loop.p99Median)} / ${ms(f.loop.p99Max)}`,
          ms(f.loop.max),
          pct(p(f, 'nats')?.cpuPct ?? NaN),
          mb(p(f, 'nats')?.rssAvgMb ?? NaN),
          pct(p(f, 'etcd')?.cpuPct ?? NaN),
          mb(p(f, 'etcd')?.rssAvgMb ?? NaN),
          pct(p(f, 'client')?.cpuPct ?? NaN),
          pct(f.window?.stealPct ?? NaN),
        ];
      }),
    ),
  );
  for (const f of results) {
    if (f.connect?.failed.size)
      lines.push(`N=${f.n}: connection failures: ${describeFailures(f.connect.failed)}`);
    if (f.error) lines.push(`N=${f.n}: FAILED: ${f.error}`);
    if (f.loopTimeline)
      lines.push(
        `N=${f.n}: per 5 s, worst loop delay / longest GC pause (ms): ${f.loopTimeline}; GC total ${int(f.gcTotalMs ?? NaN)} ms in ${cfg.steadySeconds} s`,
      );
    if (f.heap) {
      note(`agents N=${f.n}: summarizing the heap snapshot ${f.heap}`);
      try {
        lines.push('', `N=${f.n}: backend heap after the window by constructor (self size): ${f.heap}`);
        lines.push(
          table(
            ['self MB', 'count', 'per agent', 'constructor / type'],
            summarizeHeap(f.heap, 25).map((h) => [
              fix(h.selfMb, 1),
              int(h.count),
              fix(h.count / f.n, 1),
              h.name,
            ]),
          ),
        );
      } catch (err) {
        lines.push(`heap summary failed: ${(err as Error).message}`);
      }
    }
    if (f.backendFds !== undefined)
      lines.push(
        `N=${f.n}: open fds at the end of the window: backend ${f.backendFds}, client ${f.clientFds}`,
      );
    if (f.storm) {
      lines.push(
        `N=${f.n}: restart storm: backend restarted, ${int(f.storm.opened)}/${int(f.n)} agents reconnected in ${secs(f.storm.seconds)} (${cfg.connectConcurrency} in flight, cold verification cache), ` +
          `handshake p50 ${ms(f.storm.handshake.p50)} p99 ${ms(f.storm.handshake.p99)}; backend sees ${int(f.storm.backendConnected)}${f.storm.failed.size ? `; failures: ${describeFailures(f.storm.failed)}` : ''}`,
      );
    }
    const b = p(f, 'backend');
    const goal =
      f.n >= 10_000 && b
        ? `  goal (<500 MB, <20%): ${b.rssMaxMb < 500 && b.cpuPct < 20 ? 'met' : 'NOT met'}`
        : '';
    summary.push(
      f.error && !b
        ? `agents N=${int(f.n).padEnd(6)} FAILED with ${int(f.opened)} connected: ${f.error}`
        : `agents N=${int(f.n).padEnd(6)} connected ${int(f.opened)}/${int(f.n)} in ${secs((f.connect?.seconds ?? NaN) + f.firstHandshakeMs / 1000)} (backend sees ${int(f.backendConnected)})  backend RSS ${mb(b?.rssAvgMb ?? NaN)} (max ${mb(b?.rssMaxMb ?? NaN)}, after GC ${mb(f.loaded.afterGc?.rss_mb ?? NaN)})  CPU ${pct(b?.cpuPct ?? NaN)}  nats ${pct(p(f, 'nats')?.cpuPct ?? NaN)}  etcd ${pct(p(f, 'etcd')?.cpuPct ?? NaN)}  ${fix(f.appliedPerSec, 0)} KA/s  loop p99 ${ms(f.loop.p99Max)}  others ${pct(f.window?.othersPct ?? NaN)}${goal}${f.error ? `  (error: ${f.error})` : ''}`,
    );
    if (f.profile) {
      lines.push('', `N=${f.n}: profile of the backend over the steady window:`, ...profileLines(f.profile));
    }
    if (f.connectProfile) {
      lines.push(
        '',
        `N=${f.n}: profile of the backend while the agents connected:`,
        ...profileLines(f.connectProfile),
      );
    }
    if (f.storm)
      summary.push(
        `agents N=${int(f.n).padEnd(6)} restart storm: ${int(f.storm.opened)}/${int(f.n)} reconnected in ${secs(f.storm.seconds)} (cold auth cache, handshake p99 ${ms(f.storm.handshake.p99)})`,
      );
  }
  return { title: 'agents: simulated agents over WebSocket against one backend', lines, summary };
}
