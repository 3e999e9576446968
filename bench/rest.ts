/**
 * The REST API of one backend (bin/monitor-backend, external etcd + nats-server from the test
 * harness, log level warn) under load from this process, over keep-alive HTTP/1.1 connections
 * (bench/lib/http1.ts):
 *
 *  1. POST of events, one per request, closed loop over 64 connections: `POST
 *     /api/core/v2/namespaces/default/events/<entity>/<check>` for 1,000 proxy entities x 10 checks,
 *     each answered 201 only once the event is durable in JetStream KV (the entity actor's write).
 *     Authenticated with the API key, and with a Bearer token from `GET /auth`. Several runs.
 *     One request in BENCH_REST_RAW_SAMPLE is followed by a GET of the same event on the same
 *     connection (read-after-write under full load).
 *  2. Read-after-write at a moderate open-loop rate: every POST followed by a GET of the event; the
 *     GET latency and whether it returned the event just written.
 *  3. The first pages of `GET /api/core/v2/namespaces/default/events?limit=100` (following
 *     `Monitor-Continue`) with 10,000 events stored, open loop at 500 requests/s.
 *
 * Before 1, every entity/check pair is posted once (creates the proxy entities and the 10,000
 * events); the measured windows then update existing events.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ADMIN, startBackend, waitFor, type Backend } from '../test/harness/index.ts';
import { SHARD_COUNT } from '../proto/names.ts';
import { heapSnapshot, instrumentation, loopReports, memoryAfterGc, profileLines, startProfile, type Instrumentation, type LoopReport } from './lib/backend-ctl.ts';
import { summarizeHeap } from './lib/heapsnapshot.ts';
import { fix, int, mb, ms, note, pct, secs, table } from './lib/format.ts';
import { connect, ConnPool, type ClientKind, type HttpConn, type HttpResponse } from './lib/http1.ts';
import { Cleanup, sleep, startInfra, type Infra } from './lib/infra.ts';
import { ProcMeter, type WindowFigures } from './lib/procstat.ts';
import type { BenchResult } from './lib/result.ts';
import { median, Samples } from './lib/stats.ts';

export interface RestConfig {
  entities: number;
  checks: number;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  runs: number;
  auth: Array<'key' | 'bearer'>;
  /** During the POST windows, one request in this many is followed by a GET of its event (0: none). */
  rawSample: number;
  /** Open-loop POSTs/s of the read-after-write phase, each followed by a GET (0: skip the phase). */
  rawRate: number;
  /** Open-loop list requests/s (0: skip the phase). */
  listRate: number;
  listLimit: number;
  /** Pages cycled through: the first, then the next ones by their continue token. */
  listPages: number;
  client: ClientKind;
  /** An extra, CPU-profiled window per phase (figures shown, not used for the goals). */
  profile: boolean;
  /** Heap-snapshot the backend after the POST windows and print its make-up by constructor. */
  heap: boolean;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);

export function restConfig(args: string[]): RestConfig {
  const auth = (process.env.BENCH_REST_AUTH ?? 'key,bearer').split(',').filter((a): a is 'key' | 'bearer' => a === 'key' || a === 'bearer');
  return {
    entities: envNum('BENCH_REST_ENTITIES', 1000),
    checks: envNum('BENCH_REST_CHECKS', 10),
    connections: envNum('BENCH_REST_CONNECTIONS', 64),
    warmupSeconds: envNum('BENCH_REST_WARMUP', 5),
    seconds: envNum('BENCH_REST_SECONDS', 20),
    runs: envNum('BENCH_REST_RUNS', 2),
    auth: auth.length ? auth : ['key'],
    rawSample: envNum('BENCH_REST_RAW_SAMPLE', 100),
    rawRate: envNum('BENCH_REST_RAW_RATE', 500),
    listRate: envNum('BENCH_REST_LIST_RATE', 500),
    listLimit: envNum('BENCH_REST_LIST_LIMIT', 100),
    listPages: envNum('BENCH_REST_LIST_PAGES', 5),
    client: process.env.BENCH_REST_CLIENT === 'node' ? 'node' : 'raw',
    profile: args.includes('--profile') || process.env.BENCH_PROFILE === '1',
    heap: args.includes('--heap') || process.env.BENCH_HEAP === '1',
  };
}

const GOAL_POST_RATE = 10_000;
const GOAL_RAW_P99_MS = 3;
const GOAL_LIST_P99_MS = 20;
const API = '/api/core/v2/namespaces/default';

// --- the workload ------------------------------------------------------------------------------

/**
 * Request k goes to entity k mod E and check (k / E) mod C, so requests in flight at once go to
 * different entities (different actors), and every pair comes round again after E x C requests.
 */
class Workload {
  readonly pairs: number;
  /** The last k sent for each pair: a read that finds a later write is not a mismatch. */
  readonly lastSent: Int32Array;
  next = 0;
  constructor(readonly entities: number, readonly checks: number, readonly tag: string) {
    this.pairs = entities * checks;
    this.lastSent = new Int32Array(this.pairs).fill(-1);
  }

  entity(k: number): string { return `rest-${k % this.entities}`; }
  check(k: number): string { return `check-${Math.floor(k / this.entities) % this.checks}`; }
  path(k: number): string { return `${API}/events/${this.entity(k)}/${this.check(k)}`; }
  output(k: number): string { return `${this.check(k)} ${this.tag} ${k}`; }
  status(k: number): number { return k % 13 === 0 ? 1 : 0; }

  body(k: number): string {
    return JSON.stringify({
      entity: { metadata: { name: this.entity(k) } },
      check: { metadata: { name: this.check(k) }, status: this.status(k), output: this.output(k), interval: 60 },
    });
  }
}

const JSON_HEADERS = 'Content-Type: application/json\r\n';
const authHeader = (credential: string) => `Authorization: ${credential}\r\n`;

interface RawFigures { latency: Samples; checked: number; mismatches: number; superseded: number; bytes: number; firstMismatch?: string }
const newRaw = (): RawFigures => ({ latency: new Samples(), checked: 0, mismatches: 0, superseded: 0, bytes: 0 });

/** GET of event k right after its 201: latency, and whether it is the event just written. */
async function readAfterWrite(conn: HttpConn, w: Workload, k: number, auth: string, raw: RawFigures | undefined): Promise<void> {
  const t = performance.now();
  const res = await conn.request('GET', w.path(k), auth);
  const took = performance.now() - t;
  if (!raw) return;
  raw.latency.add(took);
  raw.checked++;
  raw.bytes += res.body.length;
  let problem: string | undefined;
  if (res.status !== 200) problem = `GET answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`;
  else {
    try {
      const ev = JSON.parse(res.body.toString('utf8')) as { entity?: { metadata?: { name?: string } }; check?: { metadata?: { name?: string }; output?: string; status?: number } };
      if (ev.check?.output !== w.output(k) || ev.check?.status !== w.status(k) || ev.entity?.metadata?.name !== w.entity(k) || ev.check?.metadata?.name !== w.check(k)) {
        problem = `expected output "${w.output(k)}", read "${ev.check?.output}" (entity ${ev.entity?.metadata?.name}, check ${ev.check?.metadata?.name})`;
      }
    } catch (err) { problem = `GET body is not JSON: ${(err as Error).message}`; }
  }
  if (!problem) return;
  // A later POST of the same pair may have landed in between: not a stale read.
  if (w.lastSent[k % w.pairs] !== k) { raw.superseded++; return; }
  raw.mismatches++;
  raw.firstMismatch ??= problem;
}

const count = (m: Map<string, number>, key: string, by = 1) => m.set(key, (m.get(key) ?? 0) + by);
const describeCounts = (m: Map<string | number, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} x${int(v)}`).join(', ');

// --- measuring windows ------------------------------------------------------------------------------

interface Ctx {
  cfg: RestConfig;
  infra: Infra;
  backend: Backend;
  ctl: Instrumentation;
  pids: Record<string, number>;
}

interface ServerFigures {
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
async function serverWindow(ctx: Ctx, profileLabel: string | undefined) {
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
      const gcPct = reports.length ? (reports.reduce((a, r) => a + r.gc_total_ms, 0) / (reports.length * 5000)) * 100 : NaN;
      const loopP99 = reports.length ? Math.max(...reports.map((r) => r.p99_ms)) : NaN;
      const loopMax = reports.length ? Math.max(...reports.map((r) => r.max_ms)) : NaN;
      const gcMax = reports.length ? Math.max(...reports.map((r) => r.gc_max_ms)) : NaN;
      const profile = prof ? await prof.stop() : undefined;
      const timeline = reports.map((r) => `${Math.round(r.max_ms)}/${Math.round(r.gc_max_ms)}`).join(' ');
      return { window, turnsPerSec, gcPct, loopP99, loopMax, gcMax, clientLoopMax, timeline, profile };
    },
  };
}

interface PostFigures {
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
async function postWindow(ctx: Ctx, w: Workload, o: { label: string; auth: string; credential: string; warmupMs: number; measureMs: number; rawSample: number; profile?: string }): Promise<PostFigures> {
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
      if (measuring && st.phase === 'measure') { lat.add(performance.now() - t); count(statuses, String(res.status)); }
      if (res.status !== 201) { firstBad ??= `${res.status} ${res.body.toString('utf8').slice(0, 200)}`; continue; }
      if (o.rawSample > 0 && k % o.rawSample === 0) {
        try { await readAfterWrite(conn, w, k, auth, measuring && st.phase === 'measure' ? raw : undefined); }
        catch (err) {
          if (measuring) { raw.mismatches++; raw.firstMismatch ??= `GET failed: ${(err as Error).message}`; }
        }
      }
      if (conn.closed) { conn = connect(ctx.cfg.client, ctx.backend.apiUrl); conns[slot] = conn; }
    }
  };
  const workers = Array.from({ length: ctx.cfg.connections }, (_, i) => worker(i));
  await sleep(o.warmupMs);
  let server: ServerFigures | undefined;
  let seconds = NaN, stoppedEarly = false;
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
  if (!server) throw new Error(`${o.label}: every request failed during warm-up (${allErrors} errors; first answer: ${firstBad})`);
  if (stoppedEarly) throw new Error(`${o.label}: stopped after ${allErrors} connection errors (${describeCounts(statuses)})`);
  const posted = lat.count;
  return { label: o.label, auth: o.auth, connections: ctx.cfg.connections, seconds, posted, rate: posted / seconds, latency: lat.summary(), statuses, firstBad, raw, server };
}

/**
 * Open loop: `fire` is called `rate` times a second on schedule, whether earlier calls are answered
 * or not; `measuring` tells whether the call falls in the measured window.
 */
async function openLoop(rate: number, warmupMs: number, measureMs: number, fire: (scheduledAt: number, measuring: boolean) => Promise<void>, onWindow: { start(): Promise<void>; end(): Promise<void> }): Promise<{ seconds: number; sent: number; lateMax: number }> {
  const inflight = new Set<Promise<void>>();
  const period = 1000 / rate;
  const t0 = performance.now();
  let i = 0, sent = 0, lateMax = 0;
  let windowStart = Infinity, windowEnd = Infinity;
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
    const due = Math.floor((now - t0) / period);
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

interface RawPhase {
  rate: number;
  seconds: number;
  post: ReturnType<Samples['summary']>;
  raw: RawFigures;
  statuses: Map<string, number>;
  server: ServerFigures;
  poolSize: number;
}

/** Open loop at `rate`: POST an event, on its 201 GET it on the same connection. */
async function rawPhase(ctx: Ctx, w: Workload, rate: number, credential: string, profile?: string): Promise<RawPhase> {
  const pool = new ConnPool(ctx.cfg.client, ctx.backend.apiUrl, ctx.cfg.connections);
  const auth = authHeader(credential);
  const post = new Samples();
  const raw = newRaw();
  const statuses = new Map<string, number>();
  let sw: Awaited<ReturnType<typeof serverWindow>> | undefined;
  let server: ServerFigures | undefined;
  const r = await openLoop(rate, ctx.cfg.warmupSeconds * 1000, ctx.cfg.seconds * 1000, async (at, measuring) => {
    const k = w.next++;
    w.lastSent[k % w.pairs] = k;
    try {
      await pool.use(async (conn) => {
        const res = await conn.request('POST', w.path(k), auth + JSON_HEADERS, w.body(k));
        if (measuring) { post.add(performance.now() - at); count(statuses, String(res.status)); }
        if (res.status === 201) await readAfterWrite(conn, w, k, auth, measuring ? raw : undefined);
      });
    } catch (err) {
      if (measuring) count(statuses, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
    }
  }, { start: async () => { sw = await serverWindow(ctx, profile); }, end: async () => { server = await sw!.stop(); } });
  const poolSize = pool.size;
  pool.close();
  return { rate: r.sent / r.seconds, seconds: r.seconds, post: post.summary(), raw, statuses, server: server!, poolSize };
}

interface ListPhase {
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
async function listPhase(ctx: Ctx, tokens: Array<string | undefined>, credential: string, profile?: string): Promise<ListPhase> {
  const { cfg } = ctx;
  const pool = new ConnPool(cfg.client, ctx.backend.apiUrl, cfg.connections);
  const auth = authHeader(credential);
  const lat = new Samples();
  const statuses = new Map<string, number>();
  let bad = 0, bytes = 0, n = 0;
  let firstBad: string | undefined;
  let sw: Awaited<ReturnType<typeof serverWindow>> | undefined;
  let server: ServerFigures | undefined;
  const r = await openLoop(cfg.listRate, Math.min(cfg.warmupSeconds, 3) * 1000, cfg.seconds * 1000, async (at, measuring) => {
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
      else if (p < tokens.length - 1 && res.headers['monitor-continue'] !== tokens[p + 1]) problem = `page ${p}: Monitor-Continue ${res.headers['monitor-continue']}, expected ${tokens[p + 1]}`;
      else if (n % 25 === 0) {
        const items = JSON.parse(res.body.toString('utf8')) as unknown[];
        if (items.length !== cfg.listLimit) problem = `page ${p}: ${items.length} items, expected ${cfg.listLimit}`;
      }
      if (problem) { bad++; firstBad ??= problem; }
    } catch (err) {
      if (measuring) { count(statuses, (err as NodeJS.ErrnoException).code ?? (err as Error).message); bad++; }
    }
  }, { start: async () => { sw = await serverWindow(ctx, profile); }, end: async () => { server = await sw!.stop(); } });
  const poolSize = pool.size;
  pool.close();
  return { rate: r.sent / r.seconds, seconds: r.seconds, latency: lat.summary(), statuses, bad, firstBad, avgBytes: lat.count ? bytes / lat.count : NaN, server: server!, poolSize };
}

// --- helpers on the API -------------------------------------------------------------------------

async function bearerToken(backend: Backend): Promise<string> {
  const res = await backend.get<{ access_token?: string }>('/auth', { headers: { Authorization: 'Basic ' + Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64') } });
  if (res.status !== 200 || !res.body?.access_token) throw new Error(`GET /auth answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
  return `Bearer ${res.body.access_token}`;
}

/** Walks the event list of namespace default: count of events and the continue tokens of the first pages. */
async function walkEvents(ctx: Ctx, credential: string, limit: number, pages: number): Promise<{ total: number; tokens: Array<string | undefined> }> {
  const conn = connect(ctx.cfg.client, ctx.backend.apiUrl);
  try {
    const tokens: Array<string | undefined> = [undefined];
    let total = 0, token: string | undefined;
    for (;;) {
      const res = await conn.request('GET', `${API}/events?limit=${limit}${token ? `&continue=${token}` : ''}`, authHeader(credential));
      if (res.status !== 200) throw new Error(`listing events answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
      total += (JSON.parse(res.body.toString('utf8')) as unknown[]).length;
      token = res.headers['monitor-continue'];
      if (!token) break;
      if (tokens.length < pages) tokens.push(token);
    }
    return { total, tokens };
  } finally { conn.close(); }
}

// --- the benchmark --------------------------------------------------------------------------------

const ratePer = (n: number) => `${int(n)}/s`;
const codes = (m: Map<string, number>) => describeCounts(m) || '-';
const onlyStatus = (m: Map<string, number>, code: string) => m.size === 1 && m.has(code);

export async function runRest(cfg: RestConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  const lines: string[] = [];
  const summary: string[] = [];
  try {
    note('rest: starting etcd, nats-server and the backend');
    const infra = await startInfra();
    cleanup.add('etcd', () => infra.etcd.stop());
    cleanup.add('nats', () => infra.nats.stop());
    const ctl = instrumentation();
    const backend = await startBackend({ name: 'bench-rest', etcdUrl: infra.etcd.url, natsUrl: infra.nats.url, logLevel: 'warn', readyTimeoutMs: 60_000, env: ctl.env });
    cleanup.add('backend', () => backend.stop(20_000));
    await waitFor(async () => (await backend.health()).body?.shards?.owned === SHARD_COUNT, { timeoutMs: 60_000, what: 'the backend to own every shard' });
    const ctx: Ctx = { cfg, infra, backend, ctl, pids: { backend: backend.proc.pid, nats: infra.nats.proc.pid, etcd: infra.etcd.proc.pid, client: process.pid } };
    const key = `Key ${ADMIN.apiKey}`;
    const w = new Workload(cfg.entities, cfg.checks, `t${Date.now().toString(36)}`);

    // --- fill: every pair once (creates the proxy entities and the events) ---------------------
    note(`rest: creating ${int(w.pairs)} events of ${int(cfg.entities)} proxy entities (${cfg.connections} connections)`);
    const fillStart = performance.now();
    const fillStatuses = new Map<string, number>();
    await Promise.all(Array.from({ length: cfg.connections }, async () => {
      const conn = connect(cfg.client, backend.apiUrl);
      try {
        while (w.next < w.pairs) {
          const k = w.next++;
          w.lastSent[k] = k;
          const res = await conn.request('POST', w.path(k), authHeader(key) + JSON_HEADERS, w.body(k));
          count(fillStatuses, String(res.status));
        }
      } finally { conn.close(); }
    }));
    const fillSeconds = (performance.now() - fillStart) / 1000;
    note(`rest: ${int(w.pairs)} events created in ${secs(fillSeconds)} (${codes(fillStatuses)})`);
    if (!onlyStatus(fillStatuses, '201')) throw new Error(`creating the events: ${codes(fillStatuses)}`);

    // --- 1. POST throughput ------------------------------------------------------------------------
    const posts: PostFigures[] = [];
    const postOnce = async (auth: 'key' | 'bearer', run: number, profile?: string) => {
      const credential = auth === 'key' ? key : await bearerToken(backend);
      const label = `${auth === 'key' ? 'API key' : 'Bearer'}${profile ? ' (profiled)' : ` #${run}`}`;
      const f = await postWindow(ctx, w, { label, auth, credential, warmupMs: cfg.warmupSeconds * 1000, measureMs: cfg.seconds * 1000, rawSample: cfg.rawSample, profile });
      note(`rest: POST ${label}: ${int(f.rate)}/s p50 ${ms(f.latency.p50)} p99 ${ms(f.latency.p99)} backend ${pct(f.server.window.procs.backend!.cpuPct)} nats ${pct(f.server.window.procs.nats!.cpuPct)} client ${pct(f.server.window.procs.client!.cpuPct)} [${codes(f.statuses)}]; read-after-write p99 ${ms(f.raw.latency.summary().p99)} (${f.raw.checked}, ${f.raw.mismatches} mismatches)`);
      return f;
    };
    // A B B A ...: the events grow while their history fills (up to 21 results), which slows the
    // later windows a little; alternating the order keeps that drift out of the comparison.
    for (let run = 1; run <= cfg.runs; run++) {
      for (const auth of run % 2 ? cfg.auth : [...cfg.auth].reverse()) posts.push(await postOnce(auth, run));
    }
    const postProfile = cfg.profile ? await postOnce(cfg.auth[0]!, 0, 'backend-rest-post') : undefined;
    // The live heap after the writes (a forced full GC): its size drives the cost of each major GC.
    const afterPosts: LoopReport | undefined = await memoryAfterGc(backend, ctl);
    const heapFile = cfg.heap ? await heapSnapshot(backend, ctl, 'backend-rest-after-posts') : undefined;

    // --- 2. read-after-write at a moderate rate ------------------------------------------------
    let raw: RawPhase | undefined, rawProfiled: RawPhase | undefined;
    if (cfg.rawRate > 0) {
      note(`rest: read-after-write, ${int(cfg.rawRate)} POST/s open loop, each followed by a GET`);
      raw = await rawPhase(ctx, w, cfg.rawRate, key);
      note(`rest: read-after-write: GET p50 ${ms(raw.raw.latency.summary().p50)} p99 ${ms(raw.raw.latency.summary().p99)} over ${int(raw.raw.checked)}, ${raw.raw.mismatches} mismatches`);
      if (cfg.profile) rawProfiled = await rawPhase(ctx, w, cfg.rawRate, key, 'backend-rest-raw');
    }

    // --- 3. list pages under load --------------------------------------------------------------
    let list: ListPhase | undefined, listProfiled: ListPhase | undefined, stored = NaN;
    if (cfg.listRate > 0) {
      // The read model follows the KV watch: wait until it holds every event.
      let walked = await walkEvents(ctx, key, 1000, 0);
      const deadline = Date.now() + 10_000;
      while (walked.total < w.pairs && Date.now() < deadline) { await sleep(200); walked = await walkEvents(ctx, key, 1000, 0); }
      stored = walked.total;
      const { tokens } = await walkEvents(ctx, key, cfg.listLimit, cfg.listPages);
      note(`rest: list pages: ${int(stored)} events listed; ${int(cfg.listRate)} req/s over the first ${tokens.length} pages of ${cfg.listLimit}`);
      list = await listPhase(ctx, tokens, key);
      note(`rest: list: p50 ${ms(list.latency.p50)} p99 ${ms(list.latency.p99)} backend ${pct(list.server.window.procs.backend!.cpuPct)} [${codes(list.statuses)}]`);
      if (cfg.profile) listProfiled = await listPhase(ctx, tokens, key, 'backend-rest-list');
    }

    // --- figures -------------------------------------------------------------------------------------
    const cpu = (s: ServerFigures, name: string) => pct(s.window.procs[name]?.cpuPct ?? NaN);
    const gcCell = (s: ServerFigures) => `${pct(s.gcPct)} (${ms(s.gcMax)})`;
    const loopCell = (s: ServerFigures) => `${ms(s.loopP99)} / ${ms(s.loopMax)}`;
    lines.push(
      `one backend (log level warn), external etcd + nats-server; client = this process (${cfg.client === 'raw' ? 'bench/lib/http1.ts keep-alive HTTP/1.1' : 'node:http keep-alive Agent'});`,
      `${int(cfg.entities)} proxy entities x ${cfg.checks} checks (${int(w.pairs)} events), created first in ${secs(fillSeconds)} (${int(w.pairs / fillSeconds)}/s incl. entity creation);`,
      `windows ${cfg.seconds} s after ${cfg.warmupSeconds} s warm-up; CPU in % of one core; others = CPU of the rest of the machine (noise);`,
      `turns/s = actor turns committed (/health); GC = backend main-thread GC pauses, % of the window (longest pause); loop = backend event-loop delay,`,
      `worst 5-s p99 / max, both including the 10 ms sampling interval; client loop max = longest event-loop stall of this process (the load generator)`,
      '',
      `1. POST /events/<entity>/<check>, closed loop, ${cfg.connections} keep-alive connections; read-after-write = GET of 1 in ${cfg.rawSample} events right after its 201, same connection`,
    );
    const postRow = (f: PostFigures) => {
      const r = f.raw.latency.summary();
      return [
        f.label, int(f.rate), ms(f.latency.p50), ms(f.latency.p99), ms(f.latency.max),
        cpu(f.server, 'backend'), mb(f.server.window.procs.backend?.rssMaxMb ?? NaN), cpu(f.server, 'nats'), cpu(f.server, 'etcd'), cpu(f.server, 'client'), pct(f.server.window.othersPct), pct(f.server.window.stealPct),
        int(f.server.turnsPerSec), gcCell(f.server), loopCell(f.server), ms(f.server.clientLoopMax), codes(f.statuses),
        r.count ? `${ms(r.p50)} / ${ms(r.p99)} (${int(r.count)})` : '-', int(f.raw.mismatches), f.raw.checked ? `${int(f.raw.bytes / f.raw.checked)} B` : '-',
      ];
    };
    lines.push(table(
      ['auth / run', 'POST/s', 'p50', 'p99', 'max', 'backend CPU', 'backend RSS', 'nats CPU', 'etcd CPU', 'client CPU', 'others', 'steal', 'turns/s', 'GC (max)', 'loop p99 / max', 'client loop max', 'statuses', 'RAW GET p50 / p99 (n)', 'stale', 'event size'],
      [...posts, ...(postProfile ? [postProfile] : [])].map(postRow),
    ));
    for (const f of posts) if (f.firstBad) lines.push(`${f.label}: first answer other than 201: ${f.firstBad}`);
    for (const f of posts) if (f.raw.firstMismatch) lines.push(`${f.label}: first stale read: ${f.raw.firstMismatch}`);

    if (raw) {
      lines.push('', `2. read-after-write: POST then GET of the same event on the same connection, open loop at ${int(cfg.rawRate)} POST/s (pool of up to ${cfg.connections} connections); POST latency from its scheduled time`);
      const rawRow = (label: string, p: RawPhase) => {
        const g = p.raw.latency.summary();
        return [label, ratePer(p.rate), ms(p.post.p50), ms(p.post.p99), ms(g.p50), ms(g.p90), ms(g.p99), ms(g.max), int(g.count), int(p.raw.mismatches), int(p.raw.superseded),
          cpu(p.server, 'backend'), cpu(p.server, 'nats'), cpu(p.server, 'client'), pct(p.server.window.othersPct), gcCell(p.server), loopCell(p.server), ms(p.server.clientLoopMax), String(p.poolSize), codes(p.statuses)];
      };
      lines.push(table(['window', 'POST rate', 'POST p50', 'POST p99', 'GET p50', 'GET p90', 'GET p99', 'GET max', 'reads', 'stale', 'superseded', 'backend CPU', 'nats CPU', 'client CPU', 'others', 'GC (max)', 'loop p99 / max', 'client loop max', 'conns', 'statuses'],
        [rawRow('measured', raw), ...(rawProfiled ? [rawRow('profiled', rawProfiled)] : [])]));
      if (raw.raw.firstMismatch) lines.push(`first stale read: ${raw.raw.firstMismatch}`);
    }

    if (list) {
      lines.push('', `3. GET ${API}/events?limit=${cfg.listLimit} and the next ${cfg.listPages - 1} pages (Monitor-Continue), open loop at ${int(cfg.listRate)}/s, ${int(stored)} events stored; latency from the scheduled time`);
      const listRow = (label: string, p: ListPhase) => [label, ratePer(p.rate), ms(p.latency.p50), ms(p.latency.p90), ms(p.latency.p99), ms(p.latency.max),
        cpu(p.server, 'backend'), cpu(p.server, 'nats'), cpu(p.server, 'client'), pct(p.server.window.othersPct), gcCell(p.server), loopCell(p.server), ms(p.server.clientLoopMax),
        `${int(p.avgBytes / 1024)} KB`, String(p.poolSize), codes(p.statuses), int(p.bad)];
      lines.push(table(['window', 'rate', 'p50', 'p90', 'p99', 'max', 'backend CPU', 'nats CPU', 'client CPU', 'others', 'GC (max)', 'loop p99 / max', 'client loop max', 'page size', 'conns', 'statuses', 'bad'],
        [listRow('measured', list), ...(listProfiled ? [listRow('profiled', listProfiled)] : [])]));
      if (list.firstBad) lines.push(`first bad answer: ${list.firstBad}`);
      if (stored !== w.pairs) lines.push(`the list holds ${int(stored)} events, ${int(w.pairs)} expected`);
    }

    // --- goals and summary -------------------------------------------------------------------
    lines.push('');
    for (const auth of cfg.auth) {
      const fs = posts.filter((f) => f.auth === auth);
      if (!fs.length) continue;
      const rates = fs.map((f) => f.rate);
      const med = median(rates);
      const all201 = fs.every((f) => onlyStatus(f.statuses, '201'));
      const met = med >= GOAL_POST_RATE;
      const p99s = fs.map((f) => f.latency.p99);
      const cpuOf = (name: string) => median(fs.map((f) => f.server.window.procs[name]?.cpuPct ?? NaN));
      const line = `rest POST events (${auth === 'key' ? 'API key' : 'Bearer'}, ${cfg.connections} conns, durable): ${int(med)}/s median of ${fs.length} (${rates.map((r) => int(r)).join(', ')})  p50 ${fs.map((f) => ms(f.latency.p50)).join('/')}  p99 ${p99s.map(ms).join('/')}  ` +
        `backend CPU ${pct(cpuOf('backend'))}  nats ${pct(cpuOf('nats'))}  client ${pct(cpuOf('client'))}  others ${pct(median(fs.map((f) => f.server.window.othersPct)))}  ` +
        `statuses ${all201 ? 'all 201' : `FAILED: ${fs.map((f) => codes(f.statuses)).join(' | ')}`}  goal >= ${int(GOAL_POST_RATE)}/s: ${met ? 'met' : 'NOT met'}`;
      summary.push(line);
      lines.push(`goal POST (${auth}) >= ${int(GOAL_POST_RATE)}/s: ${met ? 'met' : 'NOT met'} (median ${int(med)}/s, runs ${rates.map((r) => int(r)).join(', ')})${met || cfg.profile ? '' : '; see `bench/run.ts rest --profile`'}`);
    }
    {
      let stale = raw?.raw.mismatches ?? 0, checked = raw?.raw.checked ?? 0;
      for (const f of posts) { stale += f.raw.mismatches; checked += f.raw.checked; }
      const loadP99 = posts.filter((f) => f.raw.checked > 0).map((f) => f.raw.latency.summary().p99);
      const loadMet = median(loadP99) < GOAL_RAW_P99_MS;
      const g = raw?.raw.latency.summary();
      const rawMet = g ? g.p99 < GOAL_RAW_P99_MS : false;
      const verdict = (m: boolean) => (m ? 'met' : 'NOT met');
      if (checked > 0) {
        const parts = [
          ...(loadP99.length ? [`under full POST load p99 ${loadP99.map(ms).join('/')} (${verdict(loadMet)})`] : []),
          ...(g ? [`at ${int(cfg.rawRate)} POST/s p50 ${ms(g.p50)} p99 ${ms(g.p99)} (${verdict(rawMet)})`] : []),
        ];
        summary.push(`rest read-after-write GET, goal p99 < ${GOAL_RAW_P99_MS} ms: ${parts.join('; ')}  stale reads ${stale === 0 ? `0 of ${int(checked)}` : `FAILED: ${int(stale)} of ${int(checked)}`}`);
        lines.push(`goal read-after-write GET p99 < ${GOAL_RAW_P99_MS} ms: ${parts.join('; ')}; stale reads: ${int(stale)} of ${int(checked)} checked (all windows)`);
      }
    }
    if (list) {
      const met = list.latency.p99 < GOAL_LIST_P99_MS;
      const ok = onlyStatus(list.statuses, '200') && list.bad === 0;
      summary.push(`rest list events limit=${cfg.listLimit} at ${int(cfg.listRate)}/s (${int(stored)} stored): p50 ${ms(list.latency.p50)}  p99 ${ms(list.latency.p99)}  max ${ms(list.latency.max)}  backend CPU ${cpu(list.server, 'backend')}  ` +
        `${ok ? 'all 200' : `FAILED: ${codes(list.statuses)}, ${list.bad} bad`}  goal p99 < ${GOAL_LIST_P99_MS} ms: ${met ? 'met' : 'NOT met'}`);
      lines.push(`goal list page p99 < ${GOAL_LIST_P99_MS} ms at ${int(cfg.listRate)}/s: ${met ? 'met' : 'NOT met'} (${ms(list.latency.p99)})`);
    }

    lines.push('', 'backend per 5 s, worst event-loop delay / longest GC pause (ms):');
    for (const f of posts) lines.push(`  POST ${f.label}: ${f.server.timeline}`);
    if (raw) lines.push(`  read-after-write: ${raw.server.timeline}`);
    if (list) lines.push(`  list: ${list.server.timeline}`);
    if (afterPosts) lines.push(`backend memory after the POST windows, after a forced full GC: heap used ${mb(afterPosts.heap_used_mb)} of ${mb(afterPosts.heap_total_mb)}, RSS ${mb(afterPosts.rss_mb)}, external ${mb(afterPosts.external_mb)}`);
    if (heapFile) {
      try {
        lines.push('', `backend heap after the POST windows by constructor (self size): ${heapFile}`);
        lines.push(table(['self MB', 'count', 'per event', 'constructor / type'], summarizeHeap(heapFile, 25).map((h) => [fix(h.selfMb, 1), int(h.count), fix(h.count / w.pairs, 1), h.name])));
      } catch (err) { lines.push(`heap summary failed: ${(err as Error).message}`); }
    }
    const warnings = new Map<string, number>();
    for (const l of backend.logs()) if (l.level === 'warn' || l.level === 'error') count(warnings, `${l.level}: ${l.msg ?? l.message ?? JSON.stringify(l).slice(0, 120)}`);
    lines.push(`backend warnings/errors logged: ${warnings.size ? describeCounts(warnings) : 'none'}`);

    const profiles: Array<[string, string | undefined]> = [];
    if (postProfile) profiles.push([`backend, POST of events (${postProfile.label}, ${int(postProfile.rate)}/s)`, postProfile.server.profile]);
    if (rawProfiled) profiles.push([`backend, read-after-write at ${int(cfg.rawRate)}/s`, rawProfiled.server.profile]);
    if (listProfiled) profiles.push([`backend, list pages at ${int(cfg.listRate)}/s`, listProfiled.server.profile]);
    for (const [what, file] of profiles) lines.push('', `profile of the ${what} (its own window):`, ...(file ? profileLines(file) : ['no profile written']));
    return { title: 'rest: REST API of one backend, event POSTs, read-after-write, list pages', lines, summary };
  } finally {
    await cleanup.run();
  }
}

