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
import { ADMIN } from '../../test/harness/index.ts';
import {
  heapSnapshot,
  instrumentation,
  memoryAfterGc,
  profileLines,
  type LoopReport,
} from '../lib/backend-ctl.ts';
import { summarizeHeap } from '../lib/heapsnapshot.ts';
import { fix, int, mb, ms, note, pct, secs, table } from '../lib/format.ts';
import { connect } from '../lib/http1.ts';
import { Cleanup, sleep, startInfraAndBackend } from '../lib/infra.ts';
import type { BenchResult } from '../lib/result.ts';
import { median } from '../lib/stats.ts';
import { bearerToken, walkEvents } from './api.ts';
import { API, GOAL_LIST_P99_MS, GOAL_POST_RATE, GOAL_RAW_P99_MS, type RestConfig } from './config.ts';
import {
  listPhase,
  postWindow,
  rawPhase,
  type Ctx,
  type ListPhase,
  type PostFigures,
  type RawPhase,
  type ServerFigures,
} from './windows.ts';
import { authHeader, count, describeCounts, JSON_HEADERS, Workload } from './workload.ts';

export { restConfig, type RestConfig } from './config.ts';

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
    const ctl = instrumentation();
    const { infra, backend } = await startInfraAndBackend('bench-rest', cleanup, ctl.env);
    const ctx: Ctx = {
      cfg,
      infra,
      backend,
      ctl,
      pids: {
        backend: backend.proc.pid,
        nats: infra.nats.proc.pid,
        etcd: infra.etcd.proc.pid,
        client: process.pid,
      },
    };
    const key = `Key ${ADMIN.apiKey}`;
    const w = new Workload(cfg.entities, cfg.checks, `t${Date.now().toString(36)}`);

    // --- fill: every pair once (creates the proxy entities and the events) ---------------------
    note(
      `rest: creating ${int(w.pairs)} events of ${int(cfg.entities)} proxy entities (${cfg.connections} connections)`,
    );
    const fillStart = performance.now();
    const fillStatuses = new Map<string, number>();
    await Promise.all(
      Array.from({ length: cfg.connections }, async () => {
        const conn = connect(cfg.client, backend.apiUrl);
        try {
          while (w.next < w.pairs) {
            const k = w.next++;
            w.lastSent[k] = k;
            const res = await conn.request('POST', w.path(k), authHeader(key) + JSON_HEADERS, w.body(k));
            count(fillStatuses, String(res.status));
          }
        } finally {
          conn.close();
        }
      }),
    );
    const fillSeconds = (performance.now() - fillStart) / 1000;
    note(`rest: ${int(w.pairs)} events created in ${secs(fillSeconds)} (${codes(fillStatuses)})`);
    if (!onlyStatus(fillStatuses, '201')) throw new Error(`creating the events: ${codes(fillStatuses)}`);

    // --- 1. POST throughput ------------------------------------------------------------------------
    const posts: PostFigures[] = [];
    const postOnce = async (auth: 'key' | 'bearer', run: number, profile?: string) => {
      const credential = auth === 'key' ? key : await bearerToken(backend);
      const label = `${auth === 'key' ? 'API key' : 'Bearer'}${profile ? ' (profiled)' : ` #${run}`}`;
      const f = await postWindow(ctx, w, {
        label,
        auth,
        credential,
        warmupMs: cfg.warmupSeconds * 1000,
        measureMs: cfg.seconds * 1000,
        rawSample: cfg.rawSample,
        profile,
      });
      note(
        `rest: POST ${label}: ${int(f.rate)}/s p50 ${ms(f.latency.p50)} p99 ${ms(f.latency.p99)} backend ${pct(f.server.window.procs.backend!.cpuPct)} nats ${pct(f.server.window.procs.nats!.cpuPct)} client ${pct(f.server.window.procs.client!.cpuPct)} [${codes(f.statuses)}]; read-after-write p99 ${ms(f.raw.latency.summary().p99)} (${f.raw.checked}, ${f.raw.mismatches} mismatches)`,
      );
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
      note(
        `rest: read-after-write: GET p50 ${ms(raw.raw.latency.summary().p50)} p99 ${ms(raw.raw.latency.summary().p99)} over ${int(raw.raw.checked)}, ${raw.raw.mismatches} mismatches`,
      );
      if (cfg.profile) rawProfiled = await rawPhase(ctx, w, cfg.rawRate, key, 'backend-rest-raw');
    }

    // --- 3. list pages under load --------------------------------------------------------------
    let list: ListPhase | undefined,
      listProfiled: ListPhase | undefined,
      stored = NaN;
    if (cfg.listRate > 0) {
      // The read model follows the KV watch: wait until it holds every event.
      let walked = await walkEvents(ctx, key, 1000, 0);
      const deadline = Date.now() + 10_000;
      while (walked.total < w.pairs && Date.now() < deadline) {
        await sleep(200);
        walked = await walkEvents(ctx, key, 1000, 0);
      }
      stored = walked.total;
      const { tokens } = await walkEvents(ctx, key, cfg.listLimit, cfg.listPages);
      note(
        `rest: list pages: ${int(stored)} events listed; ${int(cfg.listRate)} req/s over the first ${tokens.length} pages of ${cfg.listLimit}`,
      );
      list = await listPhase(ctx, tokens, key);
      note(
        `rest: list: p50 ${ms(list.latency.p50)} p99 ${ms(list.latency.p99)} backend ${pct(list.server.window.procs.backend!.cpuPct)} [${codes(list.statuses)}]`,
      );
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
        f.label,
        int(f.rate),
        ms(f.latency.p50),
        ms(f.latency.p99),
        ms(f.latency.max),
        cpu(f.server, 'backend'),
        mb(f.server.window.procs.backend?.rssMaxMb ?? NaN),
        cpu(f.server, 'nats'),
        cpu(f.server, 'etcd'),
        cpu(f.server, 'client'),
        pct(f.server.window.othersPct),
        pct(f.server.window.stealPct),
        int(f.server.turnsPerSec),
        gcCell(f.server),
        loopCell(f.server),
        ms(f.server.clientLoopMax),
        codes(f.statuses),
        r.count ? `${ms(r.p50)} / ${ms(r.p99)} (${int(r.count)})` : '-',
        int(f.raw.mismatches),
        f.raw.checked ? `${int(f.raw.bytes / f.raw.checked)} B` : '-',
      ];
    };
    lines.push(
      table(
        [
          'auth / run',
          'POST/s',
          'p50',
          'p99',
          'max',
          'backend CPU',
          'backend RSS',
          'nats CPU',
          'etcd CPU',
          'client CPU',
          'others',
          'steal',
          'turns/s',
          'GC (max)',
          'loop p99 / max',
          'client loop max',
          'statuses',
          'RAW GET p50 / p99 (n)',
          'stale',
          'event size',
        ],
        [...posts, ...(postProfile ? [postProfile] : [])].map(postRow),
      ),
    );
    for (const f of posts)
      if (f.firstBad) lines.push(`${f.label}: first answer other than 201: ${f.firstBad}`);
    for (const f of posts)
      if (f.raw.firstMismatch) lines.push(`${f.label}: first stale read: ${f.raw.firstMismatch}`);

    if (raw) {
      lines.push(
        '',
        `2. read-after-write: POST then GET of the same event on the same connection, open loop at ${int(cfg.rawRate)} POST/s (pool of up to ${cfg.connections} connections); POST latency from its scheduled time`,
      );
      const rawRow = (label: string, p: RawPhase) => {
        const g = p.raw.latency.summary();
        return [
          label,
          ratePer(p.rate),
          ms(p.post.p50),
          ms(p.post.p99),
          ms(g.p50),
          ms(g.p90),
          ms(g.p99),
          ms(g.max),
          int(g.count),
          int(p.raw.mismatches),
          int(p.raw.superseded),
          cpu(p.server, 'backend'),
          cpu(p.server, 'nats'),
          cpu(p.server, 'client'),
          pct(p.server.window.othersPct),
          gcCell(p.server),
          loopCell(p.server),
          ms(p.server.clientLoopMax),
          String(p.poolSize),
          codes(p.statuses),
        ];
      };
      lines.push(
        table(
          [
            'window',
            'POST rate',
            'POST p50',
            'POST p99',
            'GET p50',
            'GET p90',
            'GET p99',
            'GET max',
            'reads',
            'stale',
            'superseded',
            'backend CPU',
            'nats CPU',
            'client CPU',
            'others',
            'GC (max)',
            'loop p99 / max',
            'client loop max',
            'conns',
            'statuses',
          ],
          [rawRow('measured', raw), ...(rawProfiled ? [rawRow('profiled', rawProfiled)] : [])],
        ),
      );
      if (raw.raw.firstMismatch) lines.push(`first stale read: ${raw.raw.firstMismatch}`);
    }

    if (list) {
      lines.push(
        '',
        `3. GET ${API}/events?limit=${cfg.listLimit} and the next ${cfg.listPages - 1} pages (Monitor-Continue), open loop at ${int(cfg.listRate)}/s, ${int(stored)} events stored; latency from the scheduled time`,
      );
      const listRow = (label: string, p: ListPhase) => [
        label,
        ratePer(p.rate),
        ms(p.latency.p50),
        ms(p.latency.p90),
        ms(p.latency.p99),
        ms(p.latency.max),
        cpu(p.server, 'backend'),
        cpu(p.server, 'nats'),
        cpu(p.server, 'client'),
        pct(p.server.window.othersPct),
        gcCell(p.server),
        loopCell(p.server),
        ms(p.server.clientLoopMax),
        `${int(p.avgBytes / 1024)} KB`,
        String(p.poolSize),
        codes(p.statuses),
        int(p.bad),
      ];
      lines.push(
        table(
          [
            'window',
            'rate',
            'p50',
            'p90',
            'p99',
            'max',
            'backend CPU',
            'nats CPU',
            'client CPU',
            'others',
            'GC (max)',
            'loop p99 / max',
            'client loop max',
            'page size',
            'conns',
            'statuses',
            'bad',
          ],
          [listRow('measured', list), ...(listProfiled ? [listRow('profiled', listProfiled)] : [])],
        ),
      );
      if (list.firstBad) lines.push(`first bad answer: ${list.firstBad}`);
      if (stored !== w.pairs) lines.push(`the list holds ${int(stored)} events, ${int(w.pairs)} expected`);
    }

    // --- goals and summary -------------------------------------------------------------------
    const figures: Record<string, number> = {};
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
      const line =
        `rest POST events (${auth === 'key' ? 'API key' : 'Bearer'}, ${cfg.connections} conns, durable): ${int(med)}/s median of ${fs.length} (${rates.map((r) => int(r)).join(', ')})  p50 ${fs.map((f) => ms(f.latency.p50)).join('/')}  p99 ${p99s.map(ms).join('/')}  ` +
        `backend CPU ${pct(cpuOf('backend'))}  nats ${pct(cpuOf('nats'))}  client ${pct(cpuOf('client'))}  others ${pct(median(fs.map((f) => f.server.window.othersPct)))}  ` +
        `statuses ${all201 ? 'all 201' : `FAILED: ${fs.map((f) => codes(f.statuses)).join(' | ')}`}  goal >= ${int(GOAL_POST_RATE)}/s: ${met ? 'met' : 'NOT met'}`;
      summary.push(line);
      if (auth === 'key') {
        figures.post_rate = med;
        figures.post_p99_ms = median(p99s);
      }
      lines.push(
        `goal POST (${auth}) >= ${int(GOAL_POST_RATE)}/s: ${met ? 'met' : 'NOT met'} (median ${int(med)}/s, runs ${rates.map((r) => int(r)).join(', ')})${met || cfg.profile ? '' : '; see `bench/run.ts rest --profile`'}`,
      );
    }
    {
      let stale = raw?.raw.mismatches ?? 0,
        checked = raw?.raw.checked ?? 0;
      for (const f of posts) {
        stale += f.raw.mismatches;
        checked += f.raw.checked;
      }
      const loadP99 = posts.filter((f) => f.raw.checked > 0).map((f) => f.raw.latency.summary().p99);
      const loadMet = median(loadP99) < GOAL_RAW_P99_MS;
      const g = raw?.raw.latency.summary();
      const rawMet = g ? g.p99 < GOAL_RAW_P99_MS : false;
      if (g) figures.raw_get_p99_ms = g.p99;
      const verdict = (m: boolean) => (m ? 'met' : 'NOT met');
      if (checked > 0) {
        const parts = [
          ...(loadP99.length
            ? [`under full POST load p99 ${loadP99.map(ms).join('/')} (${verdict(loadMet)})`]
            : []),
          ...(g
            ? [`at ${int(cfg.rawRate)} POST/s p50 ${ms(g.p50)} p99 ${ms(g.p99)} (${verdict(rawMet)})`]
            : []),
        ];
        summary.push(
          `rest read-after-write GET, goal p99 < ${GOAL_RAW_P99_MS} ms: ${parts.join('; ')}  stale reads ${stale === 0 ? `0 of ${int(checked)}` : `FAILED: ${int(stale)} of ${int(checked)}`}`,
        );
        lines.push(
          `goal read-after-write GET p99 < ${GOAL_RAW_P99_MS} ms: ${parts.join('; ')}; stale reads: ${int(stale)} of ${int(checked)} checked (all windows)`,
        );
      }
    }
    if (list) {
      figures.list_p99_ms = list.latency.p99;
      const met = list.latency.p99 < GOAL_LIST_P99_MS;
      const ok = onlyStatus(list.statuses, '200') && list.bad === 0;
      summary.push(
        `rest list events limit=${cfg.listLimit} at ${int(cfg.listRate)}/s (${int(stored)} stored): p50 ${ms(list.latency.p50)}  p99 ${ms(list.latency.p99)}  max ${ms(list.latency.max)}  backend CPU ${cpu(list.server, 'backend')}  ` +
          `${ok ? 'all 200' : `FAILED: ${codes(list.statuses)}, ${list.bad} bad`}  goal p99 < ${GOAL_LIST_P99_MS} ms: ${met ? 'met' : 'NOT met'}`,
      );
      lines.push(
        `goal list page p99 < ${GOAL_LIST_P99_MS} ms at ${int(cfg.listRate)}/s: ${met ? 'met' : 'NOT met'} (${ms(list.latency.p99)})`,
      );
    }

    lines.push('', 'backend per 5 s, worst event-loop delay / longest GC pause (ms):');
    for (const f of posts) lines.push(`  POST ${f.label}: ${f.server.timeline}`);
    if (raw) lines.push(`  read-after-write: ${raw.server.timeline}`);
    if (list) lines.push(`  list: ${list.server.timeline}`);
    if (afterPosts)
      lines.push(
        `backend memory after the POST windows, after a forced full GC: heap used ${mb(afterPosts.heap_used_mb)} of ${mb(afterPosts.heap_total_mb)}, RSS ${mb(afterPosts.rss_mb)}, external ${mb(afterPosts.external_mb)}`,
      );
    if (heapFile) {
      try {
        lines.push('', `backend heap after the POST windows by constructor (self size): ${heapFile}`);
        lines.push(
          table(
            ['self MB', 'count', 'per event', 'constructor / type'],
            summarizeHeap(heapFile, 25).map((h) => [
              fix(h.selfMb, 1),
              int(h.count),
              fix(h.count / w.pairs, 1),
              h.name,
            ]),
          ),
        );
      } catch (err) {
        lines.push(`heap summary failed: ${(err as Error).message}`);
      }
    }
    const warnings = new Map<string, number>();
    for (const l of backend.logs())
      if (l.level === 'warn' || l.level === 'error')
        count(warnings, `${l.level}: ${l.msg ?? l.message ?? JSON.stringify(l).slice(0, 120)}`);
    lines.push(`backend warnings/errors logged: ${warnings.size ? describeCounts(warnings) : 'none'}`);

    const profiles: Array<[string, string | undefined]> = [];
    if (postProfile)
      profiles.push([
        `backend, POST of events (${postProfile.label}, ${int(postProfile.rate)}/s)`,
        postProfile.server.profile,
      ]);
    if (rawProfiled)
      profiles.push([`backend, read-after-write at ${int(cfg.rawRate)}/s`, rawProfiled.server.profile]);
    if (listProfiled)
      profiles.push([`backend, list pages at ${int(cfg.listRate)}/s`, listProfiled.server.profile]);
    for (const [what, file] of profiles)
      lines.push(
        '',
        `profile of the ${what} (its own window):`,
        ...(file ? profileLines(file) : ['no profile written']),
      );
    return {
      title: 'rest: REST API of one backend, event POSTs, read-after-write, list pages',
      lines,
      summary,
      figures,
    };
  } finally {
    await cleanup.run();
  }
}
