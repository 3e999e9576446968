/**
 * The legacy API (port 4567, docs/operations.md#legacy-api) of one backend (external etcd +
 * nats-server, log level warn) next to the core/v2 REST API of the same backend in the same run:
 *
 *  1. lists with 10,000 events stored (1,000 proxy entities x 10 checks, written through core/v2
 *     first): legacy `GET /events?limit=L` and core/v2 `GET /api/core/v2/namespaces/default/events
 *     ?limit=L` at a fixed rate (open loop, 200/s), p50/p99; then both whole lists (no limit) at a
 *     low rate, since a Classic dashboard polls the whole list;
 *  2. writes per second, closed loop over 64 keep-alive connections, one per request: core/v2 event
 *     POSTs (201 once durable) and legacy `POST /results` of `{"name","output","status","source"}`
 *     (202) for 10,000 client/check pairs (each pair written once before the window).
 *
 * A legacy route that is not served (404) is reported as such; the core/v2 figures still print.
 */
import { ADMIN, type Backend } from '../test/harness/index.ts';
import { drive, type DriveResult } from './lib/drive.ts';
import { int, ms, note, pct, table } from './lib/format.ts';
import { ConnPool, connect } from './lib/http1.ts';
import { Cleanup, startInfraAndBackend } from './lib/infra.ts';
import { ProcMeter, type WindowFigures } from './lib/procstat.ts';
import type { BenchResult } from './lib/result.ts';
import { Samples } from './lib/stats.ts';
import { API } from './rest/config.ts';
import { openLoop } from './rest/windows.ts';
import { authHeader, count, describeCounts, JSON_HEADERS, Workload } from './rest/workload.ts';

export interface LegacyBenchConfig {
  entities: number;
  checks: number;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Open-loop list requests/s, and the page size (0: the whole list). */
  listRate: number;
  listLimit: number;
  /** Open-loop rate of the whole-list requests (0: skip them). */
  fullRate: number;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);

export function legacyBenchConfig(): LegacyBenchConfig {
  return {
    entities: envNum('BENCH_LEGACY_ENTITIES', 1000),
    checks: envNum('BENCH_LEGACY_CHECKS', 10),
    connections: envNum('BENCH_LEGACY_CONNECTIONS', 64),
    warmupSeconds: envNum('BENCH_LEGACY_WARMUP', 3),
    seconds: envNum('BENCH_LEGACY_SECONDS', 20),
    listRate: envNum('BENCH_LEGACY_LIST_RATE', 200),
    listLimit: envNum('BENCH_LEGACY_LIST_LIMIT', 100),
    fullRate: envNum('BENCH_LEGACY_FULL_RATE', 2),
  };
}

interface ListFigures {
  label: string;
  rate: number;
  latency: ReturnType<Samples['summary']>;
  statuses: Map<string, number>;
  avgBytes: number;
  /** Items in one answer (parsed once), or undefined when none was a JSON array. */
  items?: number;
  window: WindowFigures;
}

interface WriteFigures {
  label: string;
  result: DriveResult;
  statuses: Map<string, number>;
}

const KEY = authHeader(`Key ${ADMIN.apiKey}`);

/** The legacy result of pair k: client `legacy-<k mod E>`, check `check-<(k / E) mod C>`. */
function legacyResult(w: Workload, k: number): string {
  return JSON.stringify({
    name: w.check(k),
    output: w.output(k),
    status: w.status(k),
    source: `legacy-${k % w.entities}`,
  });
}

/** GET `path` on `base` at `rate`/s (open loop) for the window; latency from the scheduled time. */
async function listAt(
  cfg: LegacyBenchConfig,
  pids: Record<string, number>,
  label: string,
  base: string,
  path: string,
  headers: string,
  rate: number,
  seconds: number,
): Promise<ListFigures> {
  const pool = new ConnPool('raw', base, cfg.connections);
  const lat = new Samples();
  const statuses = new Map<string, number>();
  let bytes = 0;
  let items: number | undefined;
  let meter: ProcMeter | undefined;
  let window: WindowFigures | undefined;
  const r = await openLoop(
    rate,
    cfg.warmupSeconds * 1000,
    seconds * 1000,
    async (at, measuring) => {
      try {
        const res = await pool.use((conn) => conn.request('GET', path, headers));
        if (!measuring) return;
        lat.add(performance.now() - at);
        count(statuses, String(res.status));
        bytes += res.body.length;
        if (items === undefined && res.status === 200) {
          const body = JSON.parse(res.body.toString('utf8')) as unknown;
          if (Array.isArray(body)) items = body.length;
        }
      } catch (err) {
        if (measuring) count(statuses, (err as NodeJS.ErrnoException).code ?? (err as Error).message);
      }
    },
    {
      start: async () => {
        meter = new ProcMeter(pids).start();
      },
      end: async () => {
        window = meter!.stop();
      },
    },
  );
  pool.close();
  return {
    label,
    rate: r.sent / r.seconds,
    latency: lat.summary(),
    statuses,
    avgBytes: lat.count ? bytes / lat.count : NaN,
    items,
    window: window!,
  };
}

/** Every pair once over `connections` connections: `send(conn, k)` answers the status. */
async function fill(
  cfg: LegacyBenchConfig,
  base: string,
  pairs: number,
  send: (conn: ReturnType<typeof connect>, k: number) => Promise<number>,
): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: cfg.connections }, async () => {
      const conn = connect('raw', base);
      try {
        while (next < pairs) count(statuses, String(await send(conn, next++)));
      } catch (err) {
        count(statuses, (err as Error).message);
      } finally {
        conn.close();
      }
    }),
  );
  return statuses;
}

/** Closed loop over `connections` connections, each request to the next pair. */
async function writes(
  cfg: LegacyBenchConfig,
  pids: Record<string, number>,
  label: string,
  base: string,
  pairs: number,
  request: (k: number) => { path: string; headers: string; body: string },
  expected: number,
): Promise<WriteFigures> {
  const conns = Array.from({ length: cfg.connections }, () => connect('raw', base));
  const free = [...conns];
  const statuses = new Map<string, number>();
  let next = 0;
  let measuring = false;
  const result = await drive({
    concurrency: cfg.connections,
    warmupMs: cfg.warmupSeconds * 1000,
    measureMs: cfg.seconds * 1000,
    pids,
    onWindowStart: () => {
      measuring = true;
    },
    onWindowEnd: () => {
      measuring = false;
    },
    send: async () => {
      const conn = free.pop()!;
      try {
        const q = request(next++ % pairs);
        const res = await conn.request('POST', q.path, q.headers, q.body);
        if (measuring) count(statuses, String(res.status));
        if (res.status !== expected)
          throw new Error(`${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
      } finally {
        free.push(conn);
      }
    },
  });
  for (const c of conns) c.close();
  return { label, result, statuses };
}

const codes = (m: Map<string, number>) => describeCounts(m) || '-';

export async function runLegacy(cfg: LegacyBenchConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  const lines: string[] = [];
  const summary: string[] = [];
  try {
    note('legacy: starting etcd, nats-server and the backend');
    const { infra, backend } = await startInfraAndBackend('bench-legacy', cleanup);
    const pids = {
      backend: backend.proc.pid,
      nats: infra.nats.proc.pid,
      etcd: infra.etcd.proc.pid,
      client: process.pid,
    };
    const w = new Workload(cfg.entities, cfg.checks, `l${Date.now().toString(36)}`);

    note(`legacy: storing ${int(w.pairs)} events through core/v2`);
    const filled = await fill(cfg, backend.apiUrl, w.pairs, async (conn, k) => {
      const res = await conn.request('POST', w.path(k), KEY + JSON_HEADERS, w.body(k));
      return res.status;
    });
    if (filled.size !== 1 || !filled.has('201')) throw new Error(`storing the events: ${codes(filled)}`);
    await untilListed(backend, w.pairs);

    // --- 1. lists --------------------------------------------------------------------------------
    const page = cfg.listLimit > 0 ? `?limit=${cfg.listLimit}` : '';
    const lists: ListFigures[] = [];
    const listPair = async (query: string, rate: number, what: string) => {
      for (const [label, base, path, headers] of [
        [`legacy GET /events${query}`, backend.legacyUrl, `/events${query}`, ''],
        [`core/v2 GET …/events${query}`, backend.apiUrl, `${API}/events${query}`, KEY],
      ] as const) {
        note(`legacy: ${label} at ${rate}/s (${what})`);
        const f = await listAt(cfg, pids, label, base, path, headers, rate, cfg.seconds);
        note(`legacy: ${label}: p50 ${ms(f.latency.p50)} p99 ${ms(f.latency.p99)} [${codes(f.statuses)}]`);
        lists.push(f);
      }
    };
    if (cfg.listRate > 0) await listPair(page, cfg.listRate, 'pages');
    if (cfg.fullRate > 0) await listPair('', cfg.fullRate, 'whole lists');

    // --- 2. writes ---------------------------------------------------------------------------------
    const core = await writes(
      cfg,
      pids,
      'core/v2 POST …/events/<entity>/<check>',
      backend.apiUrl,
      w.pairs,
      (k) => ({ path: w.path(k), headers: KEY + JSON_HEADERS, body: w.body(k) }),
      201,
    );
    note(`legacy: ${core.label}: ${int(core.result.rate)}/s [${codes(core.statuses)}]`);
    note(`legacy: POST /results once for each of ${int(w.pairs)} client/check pairs`);
    const legacyFill = await fill(cfg, backend.legacyUrl, w.pairs, async (conn, k) => {
      const res = await conn.request('POST', '/results', JSON_HEADERS, legacyResult(w, k));
      return res.status;
    });
    const results = legacyFill.has('202')
      ? await writes(
          cfg,
          pids,
          'legacy POST /results',
          backend.legacyUrl,
          w.pairs,
          (k) => ({ path: '/results', headers: JSON_HEADERS, body: legacyResult(w, k) }),
          202,
        )
      : undefined;
    if (results) note(`legacy: ${results.label}: ${int(results.result.rate)}/s [${codes(results.statuses)}]`);

    // --- figures ----------------------------------------------------------------------------------
    lines.push(
      `${int(w.pairs)} events stored (${int(cfg.entities)} proxy entities x ${cfg.checks} checks); open loop for lists, ` +
        `closed loop over ${cfg.connections} keep-alive connections for writes; ${cfg.seconds} s windows after ${cfg.warmupSeconds} s warm-up`,
      '',
      table(
        ['list', 'rate', 'p50', 'p99', 'max', 'items', 'avg bytes', 'statuses', 'backend CPU', 'others'],
        lists.map((f) => [
          f.label,
          `${int(f.rate)}/s`,
          ms(f.latency.p50),
          ms(f.latency.p99),
          ms(f.latency.max),
          f.items === undefined ? '-' : int(f.items),
          int(f.avgBytes),
          codes(f.statuses),
          pct(f.window.procs.backend!.cpuPct),
          pct(f.window.othersPct),
        ]),
      ),
      '',
      table(
        ['writes', 'per second', 'p50', 'p99', 'statuses', 'backend CPU', 'nats CPU', 'others'],
        [core, ...(results ? [results] : [])].map((f) => [
          f.label,
          `${int(f.result.rate)}/s`,
          ms(f.result.latency.p50),
          ms(f.result.latency.p99),
          codes(f.statuses),
          pct(f.result.window.procs.backend!.cpuPct),
          pct(f.result.window.procs.nats!.cpuPct),
          pct(f.result.window.othersPct),
        ]),
      ),
    );
    if (!results) lines.push(`legacy POST /results not measured: it answered ${codes(legacyFill)}`);
    for (const f of lists)
      summary.push(
        `legacy: ${f.label} at ${int(f.rate)}/s: p50 ${ms(f.latency.p50)}, p99 ${ms(f.latency.p99)}` +
          (f.statuses.size === 1 && f.statuses.has('200') ? '' : ` FAILED (${codes(f.statuses)})`),
      );
    summary.push(`legacy: ${core.label}: ${int(core.result.rate)}/s`);
    summary.push(
      results
        ? `legacy: ${results.label}: ${int(results.result.rate)}/s` +
            (results.result.errors ? ` FAILED (${results.result.errors} errors)` : '')
        : `legacy: POST /results FAILED (${codes(legacyFill)})`,
    );
    return { title: 'legacy API vs core/v2 (one backend)', lines, summary };
  } finally {
    await cleanup.run();
  }
}

/** Lists come from a read model that trails writes: wait until core/v2 lists every stored event. */
async function untilListed(backend: Backend, n: number): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    const all = await backend.get<unknown[]>(`${API}/events`);
    if (all.status === 200 && Array.isArray(all.body) && all.body.length >= n) return;
    if (Date.now() > end) throw new Error(`the read model does not list ${n} events within 60 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
