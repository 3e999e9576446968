/**
 * bench rest: the measuring windows: the server window (CPU, turns, GC, loop delay), the closed-loop
 * POST window, the open loop, the read-after-write phase and the list phase.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Backend } from '../../test/harness/index.ts';
import { loopReports, startProfile, type Instrumentation } from '../lib/backend-ctl.ts';
import { connect, ConnPool, type HttpConn, type HttpResponse } from '../lib/http1.ts';
import { sleep, type Infra } from '../lib/infra.ts';
import { ProcMeter, type WindowFigures } from '../lib/procstat.ts';
import { Samples } from '../lib/stats.ts';
import { API, type RestConfig } from './config.ts';
import {
  authHeader,
  count,
  describeCounts,
  JSON_HEADERS,
  newRaw,
  readAfterWrite,
  type RawFigures,
  type Workload,
} from './workload.ts';

// --- measuring windows ------------------------------------------------------------------------------

export interface Ctx {
  cfg: RestConfig;
  infra: Infra;
  backend: Backend;
  ctl: Instrumentation;
  pids: Record<string, number>;
}

export interface ServerFigures {
  window: WindowFigures;
  /** Actor turns committed per second over the window (/health runtime.committed_turns). */
  turnsPerSec: number;
  /** Main-thread GC pauses, % of the window; worst event-loop delay p99 per 5 s (preload reports). */
  gcPct: number;
  loopP99: number;
  /** Longest backend event-loop delay and GC pause in the window. */
  loopMax: number;
  gcMax: number;
  /** Event-loop delay of this process (the load generator): its stalls count in the latencies too. */
  clientLoopMax: number;
  /** Per 5 s of the window: worst backend event-loop delay / longest GC pause, ms. */
  timeline: string;
  profile?: string;
}

/** Meters the backend over a window: CPU/RSS of the processes, committed turns, GC and loop delay. */
export async function serverWindow(ctx: Ctx, profileLabel: string | undefined) {
  const committed = async () => Number((await ctx.backend.health()).body?.runtime?.committed_turns ?? NaN);
  const prof = profileLabel ? await startProfile(ctx.backend, ctx.ctl, profileLabel) : undefined;
  const c0 = await committed();
  const lagFrom = ctx.backend.proc.lineCount;
  const meter = new ProcMeter(ctx.pids).start();
  const clientLoop = monitorEventLoopDelay({ resolution: 10 });
  clientLoop.enable();
  const t0 = performance.now();
  return {
    async stop(): Promise<ServerFigures> {
      const window = meter.stop();
      clientLoop.disable();
      const clientLoopMax = clientLoop.max / 1e6;
      const seconds = (performance.now() - t0) / 1000;
      const turnsPerSec = ((await committed()) - c0) / seconds;
      const reports = loopReports(ctx.backend, lagFrom).filter((r) => !r.after_gc);
      const gcPct = reports.length
        ? (reports.reduce((a, r) => a + r.gc_total_ms, 0) / (reports.length * 5000)) * 100
        : NaN;
      const loopP99 = reports.length ? Math.max(...reports.map((r) => r.p99_ms)) : NaN;
      const loopMax = reports.length ? Math.max(...reports.map((r) => r.max_ms)) : NaN;
      const gcMax = reports.length ? Math.max(...reports.map((r) => r.gc_max_ms)) : NaN;
      const profile = prof ? await prof.stop() : undefined;
      const timeline = reports.map((r) => `${Math.round(r.max_ms)}/${Math.round(r.gc_max_ms)}`).join(' ');
      return { window, turnsPerSec, gcPct, loopP99, loopMax, gcMax, clientLoopMax, timeline, profile };
    },
  };
}

export interface PostFigures {
  label: string;
  auth: string;
  connections: number;
  seconds: number;
  posted: number;
  rate: number;
  latency: ReturnType<Samples['summary']>;
  statuses: Map<string, number>;
  firstBad?: string;
  raw: RawFigures;
  server: ServerFigures;
}

/**
 * Closed loop: `connections` workers, each on its own connection, POST one event, wait for the
 * answer, POST the next. Warm-up, then a measured window.
 */
export async function postWindow(
  ctx: Ctx,
  w: Workload,
  o: {
    label: string;
    auth: string;
    credential: string;
    warmupMs: number;
    measureMs: number;
    rawSample: number;
    profile?: string;
  },
): Promise<PostFigures> {
  const st: { phase: 'warm' | 'measure' | 'done' } = { phase: 'warm' };
  const lat = new Samples();
  const statuses = new Map<string, number>();
  const raw = newRaw();
  const auth = authHeader(o.credential);
  const headers = auth + JSON_HEADERS;
  let firstBad: string | undefined;
  let allErrors = 0;
  const conns: HttpConn[] = [];

  const worker = async (slot: number) => {
    let conn = connect(ctx.cfg.client, ctx.backend.apiUrl);
    conns[slot] = conn;
    while (st.phase !== 'done') {
      const k = w.next++;
      w.lastSent[k % w.pairs] = k;
      const measuring = st.phase === 'measure';
      const t = performance.now();
      let res: HttpResponse;
      try {
        res = await conn.request('POST', w.path(k), headers, w.body(k));
      } catch (err) {
        if (measuring) count(statuses, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
        if (++allErrors >= 1000) st.phase = 'done';
        conn.close();
        conn = connect(ctx.cfg.client, ctx.backend.apiUrl);
        conns[slot] = conn;
        await sleep(10);
        continue;
      }
      if (measuring && st.phase === 'measure') {
        lat.add(performance.now() - t);
        count(statuses, String(res.status));
      }
      if (res.status !== 201) {
        firstBad ??= `${res.status} ${res.body.toString('utf8').slice(0, 200)}`;
        continue;
      }
      if (o.rawSample > 0 && k % o.rawSample === 0) {
        try {
          await readAfterWrite(conn, w, k, auth, measuring && st.phase === 'measure' ? raw : undefined);
        } catch (err) {
          if (measuring) {
            raw.mismatches++;
            raw.firstMismatch ??= `GET failed: ${(err as Error).message}`;
          }
        }
      }
      if (conn.closed) {
        conn = connect(ctx.cfg.client, ctx.backend.apiUrl);
        conns[slot] = conn;
      }
    }
  };
  const workers = Array.from({ length: ctx.cfg.connections }, (_, i) => worker(i));
  await sleep(o.warmupMs);
  let server: ServerFigures | undefined;
  let seconds = NaN,
    stoppedEarly = false;
  if (st.phase !== 'done') {
    const sw = await serverWindow(ctx, o.profile);
    const t0 = performance.now();
    st.phase = 'measure';
    while (st.phase === 'measure' && performance.now() - t0 < o.measureMs) await sleep(50);
    stoppedEarly = st.phase !== 'measure';
    st.phase = 'done';
    seconds = (performance.now() - t0) / 1000;
    server = await sw.stop();
  }
  await Promise.race([Promise.all(workers), sleep(30_000)]);
  for (const c of conns) c?.close();
  if (!server)
    throw new Error(
      `${o.label}: every request failed during warm-up (${allErrors} errors; first answer: ${firstBad})`,
    );
  if (stoppedEarly)
    throw new Error(`${o.label}: stopped after ${allErrors} connection errors (${describeCounts(statuses)})`);
  const posted = lat.count;
  return {
    label: o.label,
    auth: o.auth,
    connections: ctx.cfg.connections,
    seconds,
    posted,
    rate: posted / seconds,
    latency: lat.summary(),
    statuses,
    firstBad,
    raw,
    server,
  };
}

/**
 * Open loop: `fire` is called `rate` times a second on schedule, whether earlier calls are answered
 * or not; `measuring` tells whether the call falls in the measured window.
 */
export async function openLoop(
  rate: number,
  warmupMs: number,
  measureMs: number,
  fire: (scheduledAt: number, measuring: boolean) => Promise<void>,
  onWindow: { start(): Promise<void>; end(): Promise<void> },
): Promise<{ seconds: number; sent: number; lateMax: number }> {
  const inflight = new Set<Promise<void>>();
  const period = 1000 / rate;
  const t0 = performance.now();
  let i = 0,
    sent = 0,
    lateMax = 0;
  let windowStart = Infinity,
    windowEnd = Infinity;
  const launch = (at: number, measuring: boolean) => {
    const p = fire(at, measuring).finally(() => inflight.delete(p));
    inflight.add(p);
  };
  for (;;) {
    const now = performance.now();
    if (windowStart === Infinity && now - t0 >= warmupMs) {
      await onWindow.start();
      windowStart = performance.now();
      windowEnd = windowStart + measureMs;
      continue;
    }
    if (now >= windowEnd) break;
    // Request i is due at t0 + i * period: the ones up to now are due (not one period later).
    const due = Math.floor((now - t0) / period) + 1;
    while (i < due) {
      const at = t0 + i * period;
      const measuring = at >= windowStart && at < windowEnd;
      lateMax = measuring ? Math.max(lateMax, now - at) : lateMax;
      if (measuring) sent++;
      launch(at, measuring);
      i++;
    }
    await sleep(1);
  }
  const seconds = (performance.now() - windowStart) / 1000;
  await Promise.race([Promise.all(inflight), sleep(30_000)]);
  await onWindow.end();
  return { seconds, sent, lateMax };
}

export interface RawPhase {
  rate: number;
  seconds: number;
  post: ReturnType<Samples['summary']>;
  raw: RawFigures;
  statuses: Map<string, number>;
  server: ServerFigures;
  poolSize: number;
}

/** Open loop at `rate`: POST an event, on its 201 GET it on the same connection. */
export async function rawPhase(
  ctx: Ctx,
  w: Workload,
  rate: number,
  credential: string,
  profile?: string,
): Promise<RawPhase> {
  const pool = new ConnPool(ctx.cfg.client, ctx.backend.apiUrl, ctx.cfg.connections);
  const auth = authHeader(credential);
  const post = new Samples();
  const raw = newRaw();
  const statuses = new Map<string, number>();
  let sw: Awaited<ReturnType<typeof serverWindow>> | undefined;
  let server: ServerFigures | undefined;
  const r = await openLoop(
    rate,
    ctx.cfg.warmupSeconds * 1000,
    ctx.cfg.seconds * 1000,
    async (at, measuring) => {
      const k = w.next++;
      w.lastSent[k % w.pairs] = k;
      try {
        await pool.use(async (conn) => {
          const res = await conn.request('POST', w.path(k), auth + JSON_HEADERS, w.body(k));
          if (measuring) {
            post.add(performance.now() - at);
            count(statuses, String(res.status));
          }
          if (res.status === 201) await readAfterWrite(conn, w, k, auth, measuring ? raw : undefined);
        });
      } catch (err) {
        if (measuring) count(statuses, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
      }
    },
    {
      start: async () => {
        sw = await serverWindow(ctx, profile);
      },
      end: async () => {
        server = await sw!.stop();
      },
    },
  );
  const poolSize = pool.size;
  pool.close();
  return {
    rate: r.sent / r.seconds,
    seconds: r.seconds,
    post: post.summary(),
    raw,
    statuses,
    server: server!,
    poolSize,
  };
}

export interface ListPhase {
  rate: number;
  seconds: number;
  latency: ReturnType<Samples['summary']>;
  statuses: Map<string, number>;
  bad: number;
  firstBad?: string;
  avgBytes: number;
  server: ServerFigures;
  poolSize: number;
}

/** Open loop at `rate` over the first `tokens.length` pages (the first has no token). */
export async function listPhase(
  ctx: Ctx,
  tokens: Array<string | undefined>,
  credential: string,
  profile?: string,
): Promise<ListPhase> {
  const { cfg } = ctx;
  const pool = new ConnPool(cfg.client, ctx.backend.apiUrl, cfg.connections);
  const auth = authHeader(credential);
  const lat = new Samples();
  const statuses = new Map<string, number>();
  let bad = 0,
    bytes = 0,
    n = 0;
  let firstBad: string | undefined;
  let sw: Awaited<ReturnType<typeof serverWindow>> | undefined;
  let server: ServerFigures | undefined;
  const r = await openLoop(
    cfg.listRate,
    Math.min(cfg.warmupSeconds, 3) * 1000,
    cfg.seconds * 1000,
    async (at, measuring) => {
      const p = n++ % tokens.length;
      const token = tokens[p];
      const path = `${API}/events?limit=${cfg.listLimit}${token ? `&continue=${token}` : ''}`;
      try {
        const res = await pool.use((conn) => conn.request('GET', path, auth));
        if (!measuring) return;
        lat.add(performance.now() - at);
        count(statuses, String(res.status));
        bytes += res.body.length;
        // Cheap checks on every answer; a full parse of one in 25.
        let problem: string | undefined;
        if (res.status !== 200) problem = `${res.status} ${res.body.toString('utf8').slice(0, 200)}`;
        else if (p < tokens.length - 1 && res.headers['monitor-continue'] !== tokens[p + 1])
          problem = `page ${p}: Monitor-Continue ${res.headers['monitor-continue']}, expected ${tokens[p + 1]}`;
        else if (n % 25 === 0) {
          const items = JSON.parse(res.body.toString('utf8')) as unknown[];
          if (items.length !== cfg.listLimit)
            problem = `page ${p}: ${items.length} items, expected ${cfg.listLimit}`;
        }
        if (problem) {
          bad++;
          firstBad ??= problem;
        }
      } catch (err) {
        if (measuring) {
          count(statuses, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
          bad++;
        }
      }
    },
    {
      start: async () => {
        sw = await serverWindow(ctx, profile);
      },
      end: async () => {
        server = await sw!.stop();
      },
    },
  );
  const poolSize = pool.size;
  pool.close();
  return {
    rate: r.sent / r.seconds,
    seconds: r.seconds,
    latency: lat.summary(),
    statuses,
    bad,
    firstBad,
    avgBytes: lat.count ? bytes / lat.count : NaN,
    server: server!,
    poolSize,
  };
}
