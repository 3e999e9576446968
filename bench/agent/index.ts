/**
 * bench agent (issue 4): one real monitor-agent process (test/harness startAgent, log level warn,
 * relay limits lifted where the relay must not be what is measured):
 *
 *  1. idle: connected to a real backend (external etcd + nats-server), CPU and RSS after a settle;
 *  2. POST /events closed loop over keep-alive connections (202 = durable in the on-disk outbox),
 *     accepted/s with p50/p99 and the agent's CPU/RSS under load, and the rate the backend stored
 *     them at (read back through the REST API, see stored.ts);
 *  3. outbox drain: the backend stopped, N events queued, the backend started again on the same
 *     ports; events acknowledged per second until the outbox is empty;
 *  4. StatsD packets/s before loss, against a stand-in backend that adds up the flushed counters.
 */
import fs from 'node:fs';
import {
  freePort,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../../test/harness/index.ts';
import { getJson } from '../../test/harness/http.ts';
import { SHARD_COUNT } from '../../proto/names.ts';
import { fix, int, mb, ms, note, pct, secs, table } from '../lib/format.ts';
import { Cleanup, startInfra } from '../lib/infra.ts';
import type { WindowFigures } from '../lib/procstat.ts';
import type { BenchResult } from '../lib/result.ts';
import { CORE_API, GOAL_STATSD_PPS, UNLIMITED_RELAY, type AgentBenchConfig } from './config.ts';
import { drainPhase, fill, idleWindow, postPhase } from './phases.ts';
import { StandIn } from './standin.ts';
import { STATSD_PREFIX, statsdLadder } from './statsd.ts';

export { agentBenchConfig } from './config.ts';

const readInt = (file: string) => {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return NaN;
  }
};
const codes = (m: Map<string, number>) => [...m].map(([k, v]) => `${k}: ${int(v)}`).join(', ') || '-';
const cpu = (w: WindowFigures, name: string) => pct(w.procs[name]?.cpuPct ?? NaN);
const rss = (w: WindowFigures, name: string) => mb(w.procs[name]?.rssMaxMb ?? NaN);

/** Waits for the agent's HTTP API; resolves with the ms from `spawnedAt` (performance.now()) to its first answer. */
async function readyAgent(agent: AgentProc, spawnedAt: number): Promise<number> {
  let readyAt = NaN;
  await waitFor(
    async () => {
      const r = await getJson(`${agent.apiUrl}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(
        () => undefined,
      );
      if (r?.status === undefined) return undefined;
      readyAt = performance.now();
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 10, what: `agent ${agent.name} HTTP API` },
  );
  return readyAt - spawnedAt;
}

async function connectedTo(backend: Backend, name: string): Promise<void> {
  await waitFor(async () => (await backend.get(`${CORE_API}/entities/${name}`)).status === 200 || undefined, {
    timeoutMs: 30_000,
    what: `agent ${name} registered with the backend`,
  });
}

export async function runAgentBench(cfg: AgentBenchConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  const lines: string[] = [];
  const summary: string[] = [];
  const figures: Record<string, number> = {};
  const stamp = Date.now().toString(36);
  try {
    const want = cfg.phases;
    if (want.has('idle') || want.has('post') || want.has('drain')) {
      note('agent: starting etcd, nats-server and the backend');
      const infra = await startInfra();
      cleanup.add('etcd', () => infra.etcd.stop());
      cleanup.add('nats', () => infra.nats.stop());
      let backend = await startBackend({
        name: 'bench-agent-backend',
        etcdUrl: infra.etcd.url,
        natsUrl: infra.nats.url,
        logLevel: 'warn',
        readyTimeoutMs: 60_000,
      });
      cleanup.add('backend', () => backend.stop(20_000));
      const ownsAll = () =>
        waitFor(async () => (await backend.health()).body?.shards?.owned === SHARD_COUNT || undefined, {
          timeoutMs: 60_000,
          what: 'the backend to own every shard',
        });
      await ownsAll();
      const agentArgs = { logLevel: 'warn', keepaliveInterval: 20, warning: 120, extraArgs: UNLIMITED_RELAY };

      // --- 1 and 2: idle, then POST /events ----------------------------------------------------------
      const spawnedAt = performance.now();
      const a = await startAgent({
        name: `bench-agent-${stamp}`,
        backendUrls: backend.agentUrl,
        ...agentArgs,
      });
      cleanup.add('agent', () => a.stop());
      const readyMs = await readyAgent(a, spawnedAt);
      figures.agent_ready_ms = readyMs;
      await connectedTo(backend, a.name);
      const idle = want.has('idle') ? await idleWindow(a, cfg.settleSeconds, cfg.idleSeconds) : undefined;
      const pids = {
        agent: a.proc.pid,
        backend: backend.proc.pid,
        nats: infra.nats.proc.pid,
        etcd: infra.etcd.proc.pid,
        client: process.pid,
      };
      const post = !want.has('post')
        ? undefined
        : await postPhase(a, backend, {
            connections: cfg.connections,
            warmupSeconds: cfg.warmupSeconds,
            seconds: cfg.seconds,
            pids,
          });
      await a.stop();

      if (idle) {
        lines.push(
          `agent idle (connected, keepalive every 20 s; ${cfg.idleSeconds} s after ${cfg.settleSeconds} s settle): CPU ${fix(idle.procs.agent!.cpuPct, 2)}%  RSS avg ${mb(idle.procs.agent!.rssAvgMb)} max ${rss(idle, 'agent')}  (others ${pct(idle.othersPct)})`,
        );
        summary.push(
          `agent idle: CPU ${fix(idle.procs.agent!.cpuPct, 2)}%, RSS ${rss(idle, 'agent')}; spawn to HTTP API ${ms(figures.agent_ready_ms ?? NaN)}`,
        );
        figures.agent_idle_rss_mb = idle.procs.agent!.rssMaxMb;
      }
      if (post) {
        const d = post.drive;
        const w = d.window;
        lines.push(
          '',
          `POST /events, closed loop over ${d.concurrency} keep-alive connections, ${secs(d.seconds)} window (202 = durable in the outbox):`,
        );
        lines.push(
          table(
            [
              'accepted/s',
              'p50',
              'p99',
              'max',
              'errors',
              'stored+acked/s (window)',
              'agent CPU',
              'agent RSS',
              'backend CPU',
              'nats',
              'etcd',
              'client',
              'others',
            ],
            [
              [
                int(d.rate),
                ms(d.latency.p50),
                ms(d.latency.p99),
                ms(d.latency.max),
                int(d.errors),
                int(post.storedRate),
                cpu(w, 'agent'),
                rss(w, 'agent'),
                cpu(w, 'backend'),
                cpu(w, 'nats'),
                cpu(w, 'etcd'),
                cpu(w, 'client'),
                pct(w.othersPct),
              ],
            ],
          ),
        );
        lines.push(`statuses ${codes(post.statuses)}${d.firstError ? `; first error: ${d.firstError}` : ''}`);
        lines.push(
          `all ${int(post.accepted)} accepted events (warm-up included) stored by the backend ${secs(post.drainAfterSeconds)} after the load stopped: ${int(post.endToEndRate)}/s end to end`,
        );
        summary.push(
          `agent POST /events: ${int(d.rate)} accepted/s (p50 ${ms(d.latency.p50)}, p99 ${ms(d.latency.p99)}, ${d.concurrency} conns), stored+acked ${int(post.storedRate)}/s in the window, ${int(post.endToEndRate)}/s end to end; agent CPU ${cpu(w, 'agent')}, RSS under load ${rss(w, 'agent')}` +
            `${d.errors || [...post.statuses.keys()].some((k) => k !== '202') ? `  FAILED: ${codes(post.statuses)}` : ''}`,
        );
      }

      // --- 3: outbox drain -----------------------------------------------------------------------
      if (want.has('drain')) {
        note('agent: stopping the backend; queueing events while it is down');
        await backend.stop(20_000);
        const b = await startAgent({
          name: `bench-drain-${stamp}`,
          backendUrls: backend.agentUrl,
          ...agentArgs,
        });
        cleanup.add('drain agent', () => b.stop());
        await readyAgent(b, performance.now());
        const queued = await fill(b, 'drain-', cfg.drainEvents, 16);
        note(
          `agent: ${int(queued.accepted)} events queued in ${secs(queued.seconds)} (${codes(queued.statuses)}); starting the backend again`,
        );
        const restartedAt = performance.now();
        backend = await startBackend({ ...backend.options, readyTimeoutMs: 60_000 });
        const drain = await drainPhase(b, backend, 'drain-', queued.accepted, restartedAt, {
          agent: b.proc.pid,
          backend: backend.proc.pid,
          nats: infra.nats.proc.pid,
          etcd: infra.etcd.proc.pid,
        });
        await b.stop();
        lines.push(
          '',
          `outbox drain: ${int(queued.accepted)} events queued with the backend down (${int(queued.rate)} accepted/s over 16 connections), then the backend started on the same ports:`,
        );
        lines.push(
          table(
            [
              'events',
              'first stored after',
              'all stored after',
              'drain rate',
              'agent CPU',
              'agent RSS',
              'backend CPU',
              'nats',
              'etcd',
              'others',
            ],
            [
              [
                int(drain.events),
                secs(drain.firstAfterSeconds),
                secs(drain.allAfterSeconds),
                `${int(drain.rate)}/s`,
                cpu(drain.window, 'agent'),
                rss(drain.window, 'agent'),
                cpu(drain.window, 'backend'),
                cpu(drain.window, 'nats'),
                cpu(drain.window, 'etcd'),
                pct(drain.window.othersPct),
              ],
            ],
          ),
        );
        lines.push(
          '("after" counts from the backend\'s process start; the agent reconnects on its backoff; the meter starts once /health answers)',
        );
        summary.push(
          `agent outbox drain: ${int(drain.events)} events at ${int(drain.rate)}/s acknowledged (all in ${secs(drain.allAfterSeconds)} after the backend was started); queued with the backend down at ${int(queued.rate)}/s`,
        );
      }
    }
    // --- 4: StatsD -----------------------------------------------------------------------------
    if (want.has('statsd')) {
      note('agent: StatsD against a stand-in backend');
      const standin = await StandIn.start(await freePort(), STATSD_PREFIX);
      cleanup.add('stand-in', () => standin.close());
      const c = await startAgent({
        name: `bench-statsd-${stamp}`,
        backendUrls: standin.url,
        logLevel: 'warn',
        extraArgs: [...UNLIMITED_RELAY, '--statsd-flush-interval', '1'],
      });
      cleanup.add('statsd agent', () => c.stop());
      await readyAgent(c, performance.now());
      await waitFor(() => standin.connected > 0 || undefined, {
        timeoutMs: 30_000,
        what: 'the StatsD agent to connect to the stand-in',
      });
      const steps = await statsdLadder(c, standin, cfg.statsdRates, cfg.statsdSeconds, cfg.statsdNames);
      await c.stop();
      const rmemMax = readInt('/proc/sys/net/core/rmem_max');
      const rmemDefault = readInt('/proc/sys/net/core/rmem_default');
      lines.push(
        '',
        `StatsD counters (\`${STATSD_PREFIX}<i>:1|c\`, one per datagram, ${cfg.statsdNames} names, ${cfg.statsdSeconds} s per rate, flush every 1 s; net.core.rmem_max ${int(rmemMax)}, rmem_default ${int(rmemDefault)} bytes):`,
      );
      lines.push(
        table(
          [
            'offered pps',
            'sent pps',
            'sent',
            'counted',
            'lost',
            'loss',
            'exact',
            'agent CPU',
            'agent RSS',
            'sender CPU',
            'others (incl. sender)',
          ],
          steps.map((s) => [
            int(s.offered),
            int(s.sendRate),
            int(s.sent),
            int(s.received),
            int(s.sent - s.received),
            `${fix(s.lossPct, 2)}%`,
            s.received === s.sent ? 'yes' : 'no',
            cpu(s.window, 'agent'),
            rss(s.window, 'agent'),
            pct(s.senderCpuPct),
            pct(s.window.othersPct),
          ]),
        ),
      );
      const exact = steps.filter((s) => s.received === s.sent);
      const best = exact.reduce((m, s) => Math.max(m, s.sendRate), 0);
      const overCounted = steps.filter((s) => s.received > s.sent);
      const met = best >= GOAL_STATSD_PPS;
      lines.push(
        `goal StatsD >= ${int(GOAL_STATSD_PPS)} packets/s with counters exact: ${met ? 'met' : 'NOT met'} (highest lossless send rate ${int(best)}/s)`,
      );
      summary.push(
        `agent StatsD: highest lossless rate ${int(best)} packets/s (${steps.map((s) => `${int(s.sendRate)}/s ${fix(s.lossPct, 2)}% lost`).join(', ')})  goal >= ${int(GOAL_STATSD_PPS)}/s: ${met ? 'met' : 'NOT met'}` +
          `${overCounted.length ? '  FAILED: counted more than sent' : ''}`,
      );
    }
    return { title: 'agent: idle, POST /events, outbox drain, StatsD', lines, summary, figures };
  } finally {
    await cleanup.run();
  }
}
