/**
 * Actor `ask` round trips per second on one node, every ask a state change (compare-and-set write
 * to JetStream KV before the reply).
 *
 *  1. counter actor: a real etcd and nats-server (test harness), the runtime in ONE separate
 *     process (bench/ask-host.ts) owning all 256 shards, and this process as the client
 *     (ActorClient over one NATS connection) at several concurrency levels across many actors.
 *  2. entity actor: the real backend (bin/monitor-backend) hosts the entity actors; this process
 *     sends them `keepalive` messages, as the agent gateway does (two KV writes per keepalive:
 *     the entity record and its keepalive event).
 */
import path from 'node:path';
import { Proc, startBackend, waitFor, type Backend } from '../test/harness/index.ts';
import { NatsAdapter } from '../actors/runtime/nats.ts';
import { ActorClient } from '../actors/runtime/ask.ts';
import { SHARD_COUNT } from '../proto/names.ts';
import type { KeepaliveMsg } from '../actors/entity/messages.ts';
import { entityRef } from '../actors/entity/ref.ts';
import { COUNTER_KIND } from './lib/counter.ts';
import { keepaliveEvent } from './lib/keepalive.ts';
import { drive, type DriveResult } from './lib/drive.ts';
import { fix, int, ms, note, pct, table } from './lib/format.ts';
import { Cleanup, REPO_ROOT, startInfra } from './lib/infra.ts';
import {
  instrumentation,
  loopReports,
  PRELOAD_IMPORT,
  profileLines,
  startProfile,
} from './lib/backend-ctl.ts';
import type { BenchResult } from './lib/result.ts';

export interface AskConfig {
  /** In-flight asks for the counter actor. */
  levels: number[];
  /** In-flight keepalives for the entity actor. */
  keepaliveLevels: number[];
  /** Distinct actors the asks go to. */
  actors: number;
  warmupSeconds: number;
  seconds: number;
  /** CPU-profile the host over the window of `profileLevel`, and the backend over its first keepalive window. */
  profile: boolean;
  profileLevel: number;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);
const envList = (name: string, dflt: number[]) =>
  process.env[name] ? process.env[name]!.split(',').map(Number) : dflt;

export function askConfig(args: string[]): AskConfig {
  return {
    levels: envList('BENCH_ASK_LEVELS', [64, 256, 1024]),
    keepaliveLevels: envList('BENCH_KEEPALIVE_LEVELS', [256]),
    actors: envNum('BENCH_ASK_ACTORS', 2000),
    warmupSeconds: envNum('BENCH_ASK_WARMUP', 3),
    seconds: envNum('BENCH_ASK_SECONDS', 15),
    profile: args.includes('--profile') || process.env.BENCH_PROFILE === '1',
    profileLevel: envNum('BENCH_PROFILE_LEVEL', 256),
  };
}

interface HostStats {
  committed: number;
  batches: number;
  writes: number;
  actors: number;
  mailbox: number;
}

function lastHostStats(host: Proc): HostStats | undefined {
  const lines = host.lines('stdout');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.includes('"stats"')) continue;
    try {
      return (JSON.parse(lines[i]!) as { stats: HostStats }).stats;
    } catch {
      /* partial */
    }
  }
  return undefined;
}

/** Share of wall time the server's main thread spent in GC pauses since line `fromLine` (preload reports, 5 s each). */
function gcShare(p: { proc: Proc }, fromLine: number): number {
  const reports = loopReports(p, fromLine).filter((r) => !r.after_gc);
  return reports.length
    ? (reports.reduce((a, r) => a + r.gc_total_ms, 0) / (reports.length * 5000)) * 100
    : NaN;
}

const latencyRow = (label: string, r: DriveResult, serverName: string, extra: string[] = []) => [
  label,
  String(r.concurrency),
  int(r.rate),
  ms(r.latency.p50),
  ms(r.latency.p99),
  ms(r.latency.max),
  pct(r.window.procs[serverName]?.cpuPct ?? NaN),
  pct(r.window.procs.nats?.cpuPct ?? NaN),
  pct(r.window.procs.client?.cpuPct ?? NaN),
  pct(r.window.othersPct),
  pct(r.window.stealPct),
  ...extra,
  r.errors ? `${r.errors} errors` : '',
];

export async function runAsk(cfg: AskConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  const lines: string[] = [];
  const summary: string[] = [];
  try {
    note('ask: starting etcd and nats-server');
    const infra = await startInfra();
    cleanup.add('etcd', () => infra.etcd.stop());
    cleanup.add('nats', () => infra.nats.stop());

    const client = await NatsAdapter.connect({ servers: [infra.nats.url], name: 'bench-client' });
    cleanup.add('client NATS connection', () => client.close());
    const actors = new ActorClient(client, SHARD_COUNT);
    const ids = Array.from({ length: cfg.actors }, (_, i) => `c${i}`);

    // --- 1. counter actor in bench/ask-host.ts -----------------------------------------------
    // The preload gives a CPU profile of one measured window on request (--profile).
    const hostCtl = instrumentation();
    const host = Proc.start(
      'ask-host',
      process.execPath,
      [
        '--import',
        'tsx',
        ...PRELOAD_IMPORT,
        path.join(REPO_ROOT, 'bench/ask-host.ts'),
        '--etcd',
        infra.etcd.url,
        '--nats',
        infra.nats.url,
      ],
      { cwd: REPO_ROOT, env: { BENCH_CTL_FILE: hostCtl.ctlFile } },
    );
    const hostRef = { proc: host };
    const profiles: Array<[string, string | undefined]> = [];
    cleanup.add('ask-host', () => host.stop(15_000));
    const ready = JSON.parse(await host.waitForLine((l) => l.includes('"ready"'), 90_000)) as { ms: number };
    note(
      `ask: host owns all ${SHARD_COUNT} shards after ${ready.ms} ms; ${cfg.actors} counter actors, ${cfg.seconds} s per level`,
    );

    const pids = {
      host: host.pid,
      nats: infra.nats.proc.pid,
      etcd: infra.etcd.proc.pid,
      client: process.pid,
    };
    const rows: string[][] = [];
    let best: DriveResult | undefined;
    for (const [i, c] of cfg.levels.entries()) {
      let before: HostStats | undefined,
        after: HostStats | undefined,
        lagFrom = 0;
      const profileThis = cfg.profile && c === cfg.profileLevel;
      let prof: Awaited<ReturnType<typeof startProfile>> | undefined;
      const r = await drive({
        concurrency: c,
        warmupMs: (i === 0 ? cfg.warmupSeconds + 2 : cfg.warmupSeconds) * 1000,
        measureMs: cfg.seconds * 1000,
        send: () => actors.ask(COUNTER_KIND, ids[(Math.random() * ids.length) | 0]!, 'inc', null),
        pids,
        onWindowStart: async () => {
          before = lastHostStats(host);
          lagFrom = host.lineCount;
          if (profileThis) prof = await startProfile(hostRef, hostCtl, `ask-host-c${c}`);
        },
        onWindowEnd: async () => {
          after = lastHostStats(host);
          if (prof) profiles.push([`bench/ask-host.ts, counter actor, ${c} in flight`, await prof.stop()]);
        },
      });
      const batch =
        before && after && after.batches > before.batches
          ? (after.writes - before.writes) / (after.batches - before.batches)
          : NaN;
      rows.push(latencyRow('counter', r, 'host', [fix(batch, 1), pct(gcShare(hostRef, lagFrom))]));
      note(
        `ask: counter c=${c}: ${int(r.rate)} asks/s p50 ${ms(r.latency.p50)} p99 ${ms(r.latency.p99)} host ${pct(r.window.procs.host!.cpuPct)} nats ${pct(r.window.procs.nats!.cpuPct)}${r.firstError ? ` (${r.errors} errors: ${r.firstError})` : ''}`,
      );
      if (!best || r.rate > best.rate) best = r;
      summary.push(
        `ask (counter actor, CAS write per ask)  concurrency ${String(c).padStart(4)}: ${int(r.rate).padStart(6)} asks/s  p50 ${ms(r.latency.p50)}  p99 ${ms(r.latency.p99)}  host CPU ${pct(r.window.procs.host!.cpuPct)}  nats CPU ${pct(r.window.procs.nats!.cpuPct)}  client CPU ${pct(r.window.procs.client!.cpuPct)}  others ${pct(r.window.othersPct)}${r.errors ? `  ${r.errors} errors` : ''}`,
      );
    }
    note('ask: stopping the host');
    await host.stop(15_000);

    // --- 2. keepalives to the entity actor in the real backend ------------------------------
    note('ask: starting the backend (external etcd/nats) for the entity actor');
    const backendCtl = instrumentation();
    const backend: Backend = await startBackend({
      name: 'bench-ka',
      etcdUrl: infra.etcd.url,
      natsUrl: infra.nats.url,
      logLevel: 'warn',
      readyTimeoutMs: 60_000,
      env: backendCtl.env,
    });
    cleanup.add('backend', () => backend.stop());
    await waitFor(async () => (await backend.health()).body?.shards?.owned === SHARD_COUNT, {
      timeoutMs: 60_000,
      what: 'the backend to own every shard',
    });
    const committed = async () => Number((await backend.health()).body?.runtime?.committed_turns ?? NaN);
    let seq = 0;
    const kaRows: string[][] = [];
    for (const [i, c] of cfg.keepaliveLevels.entries()) {
      let t0 = 0,
        c0 = 0,
        applied = NaN,
        lagFrom = 0;
      const profileThis = cfg.profile && i === 0;
      let prof: Awaited<ReturnType<typeof startProfile>> | undefined;
      const r = await drive({
        concurrency: c,
        warmupMs: (i === 0 ? cfg.warmupSeconds + 2 : cfg.warmupSeconds) * 1000,
        measureMs: cfg.seconds * 1000,
        send: () => {
          const name = `bench-${(Math.random() * cfg.actors) | 0}`;
          const event = keepaliveEvent(name, ++seq);
          const msg: KeepaliveMsg = { origin: { namespace: 'default', name, user: 'agent' }, event };
          return entityRef(actors, 'default', name).ask('keepalive', msg, { msgId: event.id });
        },
        pids: {
          backend: backend.proc.pid,
          nats: infra.nats.proc.pid,
          etcd: infra.etcd.proc.pid,
          client: process.pid,
        },
        onWindowStart: async () => {
          if (profileThis) prof = await startProfile(backend, backendCtl, `backend-keepalive-c${c}`);
          c0 = await committed();
          t0 = performance.now();
          lagFrom = backend.proc.lineCount;
        },
        onWindowEnd: async () => {
          applied = ((await committed()) - c0) / ((performance.now() - t0) / 1000);
          if (prof) profiles.push([`backend, entity actor keepalives, ${c} in flight`, await prof.stop()]);
        },
      });
      kaRows.push(
        latencyRow('entity keepalive', r, 'backend', [int(applied), pct(gcShare(backend, lagFrom))]),
      );
      note(
        `ask: keepalive c=${c}: ${int(r.rate)} replies/s, ${int(applied)} applied/s (committed_turns) p50 ${ms(r.latency.p50)} p99 ${ms(r.latency.p99)} backend ${pct(r.window.procs.backend!.cpuPct)}${r.firstError ? ` (${r.errors} errors: ${r.firstError})` : ''}`,
      );
      summary.push(
        `keepalives (entity actor, 2 KV writes)  concurrency ${String(c).padStart(4)}: ${int(applied).padStart(6)} applied/s  p50 ${ms(r.latency.p50)}  p99 ${ms(r.latency.p99)}  backend CPU ${pct(r.window.procs.backend!.cpuPct)}  nats CPU ${pct(r.window.procs.nats!.cpuPct)}  client CPU ${pct(r.window.procs.client!.cpuPct)}  others ${pct(r.window.othersPct)}${r.errors ? `  ${r.errors} errors` : ''}`,
      );
    }

    const head = [
      'actor',
      'in flight',
      'per s',
      'p50',
      'p99',
      'max',
      'server CPU',
      'nats CPU',
      'client CPU',
      'others CPU',
      'steal',
    ];
    lines.push(
      `counter actor: ${cfg.actors} actors, ${cfg.seconds} s windows after ${cfg.warmupSeconds} s warm-up; server = bench/ask-host.ts; CPU in % of one core`,
    );
    lines.push(
      `(others = CPU used on the machine by processes other than ours: noise; server GC = main-thread GC pauses, % of the window)`,
    );
    lines.push(table([...head, 'writes/batch', 'server GC', ''], rows));
    lines.push('');
    lines.push(
      `entity actor: keepalive messages to ${cfg.actors} entities in the real backend (server = backend); "applied/s" from /health runtime.committed_turns`,
    );
    lines.push(table([...head, 'applied/s', 'server GC', ''], kaRows));
    if (best) {
      const met = best.rate >= 15_000;
      lines.push(
        `\ngoal >= 15,000 asks/s on 2 cores: ${met ? 'met' : 'NOT met'} (best ${int(best.rate)}/s at ${best.concurrency} in flight)${met ? '' : '; see `bench/run.ts ask --profile`'}`,
      );
      summary.splice(
        cfg.levels.length,
        0,
        `ask goal >= 15,000 asks/s: ${met ? 'met' : 'NOT met'} (best ${int(best.rate)}/s at ${best.concurrency} in flight)`,
      );
    }

    for (const [what, file] of profiles) {
      lines.push(
        '',
        `profile of ${what} (measured window only):`,
        ...(file ? profileLines(file) : ['no profile written']),
      );
    }
    return { title: 'ask: actor round trips with a state write per message', lines, summary };
  } finally {
    await cleanup.run();
  }
}
