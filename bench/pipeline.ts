/**
 * Events through the pipeline on one backend (external etcd + nats-server, log level warn): events
 * are POSTed through the REST API (each 201 means stored and queued) as fast as 32 keep-alive
 * connections go for BENCH_PIPELINE_SECONDS, with one handler on their check:
 *   tcp     a `tcp` handler writing to a sink in this process (goal >= 2,000 handled/s)
 *   tcp-js  the same with a JavaScript filter and a JavaScript mutator on the handler, so every
 *           job runs the sandbox twice (same goal)
 *   pipe    a `pipe` handler (a process per event writing the payload to a file) fed a burst of
 *           BENCH_PIPELINE_PIPE_EVENTS (3,000); the file is read as it grows
 * The tcp handlers also drain BENCH_PIPELINE_QUEUED (30,000) jobs put on the queue directly: the
 * node's handling rate without ingestion sharing its thread.
 * Each kind runs twice: unpaced, for handled per second (first to last handled event, so a backlog
 * counts), then paced (tcp at the 2,000/s goal, pipe at half its maximum) for the stored-to-handled
 * latency p50/p99 (201 received → payload seen; a job handled before its 201 returns counts as 0).
 */
import { createServer } from 'node:net';
import { connect } from 'nats';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeJob } from '../proto/pipeline-job.ts';
import { adminAuth, tempDir, waitFor, type Backend } from '../test/harness/index.ts';
import { fix, int, ms, note } from './lib/format.ts';
import { Cleanup, startInfraAndBackend } from './lib/infra.ts';
import { ConnPool } from './lib/http1.ts';
import { instrumentation, profileLines, startProfile } from './lib/backend-ctl.ts';
import type { BenchResult } from './lib/result.ts';
import { percentile } from './lib/stats.ts';

export interface PipelineConfig {
  queued: number;
  profile: boolean;
  seconds: number;
  connections: number;
  kinds: Kind[];
  entities: number;
  pipeEvents: number;
}

const GOAL_TCP = 2000;
const KINDS = ['tcp', 'tcp-js', 'pipe'] as const;
type Kind = (typeof KINDS)[number];

export function pipelineConfig(args: string[] = []): PipelineConfig {
  const seconds = Number(process.env.BENCH_PIPELINE_SECONDS ?? 20);
  const kinds = (process.env.BENCH_PIPELINE_KINDS ?? KINDS.join(','))
    .split(',')
    .filter((k): k is Kind => (KINDS as readonly string[]).includes(k));
  return {
    queued: Number(process.env.BENCH_PIPELINE_QUEUED ?? 30000),
    profile: args.includes('--profile'),
    seconds,
    connections: 32,
    kinds,
    entities: Number(process.env.BENCH_PIPELINE_ENTITIES ?? 1000),
    pipeEvents: Number(process.env.BENCH_PIPELINE_PIPE_EVENTS ?? 3000),
  };
}

interface Run {
  handled: number;
  posted: number;
  refused: number;
  perSecond: number;
  p50: number;
  p99: number;
  drainSeconds: number;
}

/** POSTs for `seconds` (or until `maxEvents`), at `rate`/s when given, else as fast as the connections go. */
async function drive(
  backend: Backend,
  cfg: PipelineConfig,
  handler: string,
  seen: Map<string, number>,
  poll: () => void,
  limits: { rate?: number; maxEvents?: number } = {},
): Promise<Run> {
  const pool = new ConnPool('raw', backend.apiUrl, cfg.connections);
  const stored = new Map<string, number>();
  const headers = `Authorization: ${adminAuth.Authorization}\r\nContent-Type: application/json\r\n`;
  const end = Date.now() + cfg.seconds * 1000;
  const t0 = performance.now();
  let i = 0;
  let refused = 0;
  const tag = `${handler}-${Date.now().toString(36)}`;
  await Promise.all(
    Array.from({ length: cfg.connections }, async () => {
      while (Date.now() < end && (limits.maxEvents === undefined || i < limits.maxEvents)) {
        const n = i++;
        if (limits.rate) {
          const wait = t0 + (n / limits.rate) * 1000 - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        const token = `${tag}-${n}`;
        const body = JSON.stringify({
          entity: { metadata: { name: `pb-${n % cfg.entities}` } },
          check: { metadata: { name: `c${n % 10}` }, status: n % 3, output: token, handlers: [handler] },
        });
        const r = await pool
          .use((c) => c.request('POST', '/api/core/v2/namespaces/default/events', headers, body))
          .catch(() => undefined);
        if (r?.status === 201) stored.set(token, performance.now());
        else refused++;
      }
    }),
  );
  pool.close();
  const postedAt = performance.now();
  note(
    `pipeline ${handler}: ${int(stored.size)} stored in ${cfg.seconds} s; waiting for the handler to catch up`,
  );
  await waitFor(
    () => {
      poll();
      let c = 0;
      for (const t of stored.keys()) if (seen.has(t)) c++;
      return c >= stored.size ? true : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 200, what: `${handler}: every stored event handled` },
  ).catch((e) => note((e as Error).message));
  const lat: number[] = [];
  let first = Infinity;
  let last = 0;
  for (const [t, at] of stored) {
    const h = seen.get(t);
    if (h === undefined) continue;
    lat.push(Math.max(0, h - at));
    first = Math.min(first, h);
    last = Math.max(last, h);
  }
  lat.sort((a, b) => a - b);
  return {
    handled: lat.length,
    posted: stored.size,
    refused,
    perSecond: lat.length / ((last - first) / 1000 || 1),
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    drainSeconds: Math.max(0, (last - postedAt) / 1000),
  };
}

/**
 * Puts `n` jobs on the work queue directly (as an entity actor would, with an entity in each event)
 * and times the node handling them: the pipeline's own rate, without ingestion sharing the thread.
 */
async function drainQueued(
  natsUrl: string,
  n: number,
  handler: string,
  seen: Map<string, number>,
): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  try {
    const js = nc.jetstream();
    const tag = `queued-${Date.now().toString(36)}`;
    const entity = {
      metadata: { name: 'pb-queued', namespace: 'default', labels: { role: 'bench' } },
      entity_class: 'proxy',
      subscriptions: ['entity:pb-queued'],
      system: { hostname: 'bench', os: 'linux', arch: 'amd64' },
    };
    note(`pipeline ${handler}: queueing ${int(n)} jobs`);
    // Published in a burst, faster than the node takes them, so the queue fills first.
    for (let i = 0; i < n; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, n - i) }, (_, k) => {
          const id = `${tag}-${i + k}`;
          const event = {
            id,
            timestamp: 1,
            metadata: { namespace: 'default' },
            entity,
            check: {
              metadata: { name: 'queued', namespace: 'default' },
              status: 2,
              output: id,
              handlers: [handler],
              history: [{ status: 2, executed: 1 }],
              state: 'failing',
            },
          };
          return js.publish(
            'monitor.pipeline.jobs',
            Buffer.from(encodeJob(id, 'check', JSON.stringify(event))),
            { msgID: id },
          );
        }),
      );
    }
    const ids = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
    await waitFor(() => (ids.every((id) => seen.has(id)) ? true : undefined), {
      timeoutMs: 300_000,
      intervalMs: 200,
      what: 'every queued job handled',
    }).catch((e) => note((e as Error).message));
    const times = ids
      .map((id) => seen.get(id))
      .filter((t): t is number => t !== undefined)
      .sort((a, b) => a - b);
    return times.length > 1 ? times.length / ((times[times.length - 1]! - times[0]!) / 1000) : 0;
  } finally {
    await nc.close();
  }
}

export async function runPipeline(cfg: PipelineConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  try {
    note('pipeline: starting etcd, nats-server and the backend');
    const ctl = instrumentation();
    const { infra, backend } = await startInfraAndBackend('bench-pipeline', cleanup, ctl.env);

    const seen = new Map<string, number>();
    const tokenOf = (json: string) => {
      const m = /"output":"([^"]+)"/.exec(json);
      return m?.[1];
    };
    const lines: string[] = [];
    const summary: string[] = [];
    const put = async (kind: 'handlers' | 'filters' | 'mutators', name: string, body: object) => {
      const r = await backend.get(`/api/core/v2/namespaces/default/${kind}/${name}`, {
        method: 'PUT',
        headers: adminAuth,
        body: { metadata: { name, namespace: 'default' }, ...body },
      });
      if (r.status >= 300) throw new Error(`${kind} ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    };

    const tcpKinds = cfg.kinds.filter((k) => k !== 'pipe');
    if (tcpKinds.length > 0) {
      const sink = createServer((s) => {
        const chunks: Buffer[] = [];
        s.on('data', (d) => chunks.push(d));
        s.on('end', () => {
          const t = tokenOf(Buffer.concat(chunks).toString('utf8'));
          if (t) seen.set(t, performance.now());
        });
        s.on('error', () => {});
      });
      await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
      cleanup.add('sink', async () => {
        sink.close();
      });
      const socket = { host: '127.0.0.1', port: (sink.address() as { port: number }).port };
      // tcp-js: the sandbox on every job, one JavaScript filter and one JavaScript mutator (issue 13).
      await put('filters', 'bench-js', {
        action: 'allow',
        expressions: ["event.check.status >= 0 && event.entity.metadata.name != ''"],
      });
      await put('mutators', 'bench-js', {
        type: 'javascript',
        eval: 'return JSON.stringify({ output: event.check.output, status: event.check.status, entity: event.entity.metadata.name })',
      });
      await put('handlers', 'bench-tcp', { type: 'tcp', socket });
      await put('handlers', 'bench-tcp-js', {
        type: 'tcp',
        socket,
        filters: ['bench-js'],
        mutator: 'bench-js',
      });
      for (const kind of tcpKinds) {
        const handler = `bench-${kind}`;
        const what = kind === 'tcp' ? 'tcp handler' : 'tcp handler, JS filter + JS mutator';
        const prof = cfg.profile ? await startProfile(backend, ctl, `backend-pipeline-${kind}`) : undefined;
        const max = await drive(backend, cfg, handler, seen, () => {});
        const profFile = await prof?.stop();
        lines.push(
          `${what}, POSTs as fast as they go: ${int(max.posted)} events stored (${int(max.posted / cfg.seconds)}/s), ${int(max.handled)} handled, ${fix(max.perSecond, 0)} handled/s while storing them; backlog drained ${fix(max.drainSeconds)} s after the last POST  (goal >= ${int(GOAL_TCP)}/s)`,
        );
        if (profFile)
          lines.push(`backend profile over the unpaced ${kind} run:`, ...profileLines(profFile, 25));
        const paced = await drive(backend, cfg, handler, seen, () => {}, { rate: GOAL_TCP });
        lines.push(
          `${what} at ${int(GOAL_TCP)} events/s: ${int(paced.handled)} handled, stored→handled p50 ${ms(paced.p50)} p99 ${ms(paced.p99)}`,
        );
        const alone = await drainQueued(infra.nats.url, cfg.queued, handler, seen);
        lines.push(
          `${what}, ${int(cfg.queued)} jobs already queued (the node only handles): ${fix(alone, 0)} handled/s`,
        );
        summary.push(
          `pipeline ${kind}: ${int(max.perSecond)} handled/s while storing them, ${int(alone)}/s from a filled queue; p99 ${ms(paced.p99)} at ${int(GOAL_TCP)}/s${Math.max(max.perSecond, alone) >= GOAL_TCP ? '' : ` (goal >= ${int(GOAL_TCP)}/s NOT met)`}`,
        );
      }
    }
    if (cfg.kinds.includes('pipe')) {
      // A file per event (concurrent appends to one file would interleave); the handler writes to a
      // temporary name and renames, so a file seen is complete.
      const dir = tempDir('bench-pipeline');
      await put('handlers', 'bench-pipe', {
        type: 'pipe',
        command: `f=$(mktemp -p ${dir} .part.XXXXXX) && cat > "$f" && mv "$f" "$f.done"`,
      });
      const read = new Set<string>();
      const poll = () => {
        const now = performance.now();
        for (const f of readdirSync(dir)) {
          if (!f.endsWith('.done') || read.has(f)) continue;
          read.add(f);
          const t = tokenOf(readFileSync(join(dir, f), 'utf8'));
          if (t) seen.set(t, now);
        }
      };
      const timer = setInterval(poll, 10);
      cleanup.add('poll', async () => clearInterval(timer));
      const r = await drive(backend, cfg, 'bench-pipe', seen, poll, { maxEvents: cfg.pipeEvents });
      lines.push(
        `pipe handler (a process per event): burst of ${int(r.posted)} events, ${int(r.handled)} handled, ${fix(r.perSecond, 0)} handled/s; drained ${fix(r.drainSeconds)} s after the last POST`,
      );
      const paced = await drive(backend, cfg, 'bench-pipe', seen, poll, {
        rate: Math.max(1, Math.floor(r.perSecond * 0.5)),
        maxEvents: cfg.pipeEvents,
      });
      lines.push(
        `pipe handler at ${int(Math.floor(r.perSecond * 0.5))} events/s (half its max): stored→handled p50 ${ms(paced.p50)} p99 ${ms(paced.p99)}`,
      );
      summary.push(`pipeline pipe: ${int(r.perSecond)} handled/s max; p99 ${ms(paced.p99)} at half that`);
    }
    return { title: 'pipeline: events handled per second, one node', lines, summary };
  } finally {
    await cleanup.run();
  }
}
