/**
 * A legacy client's sockets (docs/compatibility.md#legacy-client) next to a current agent's in the
 * same run, on one backend (external etcd + nats-server, log level warn): closed-loop results over
 * TCP (one result per connection, answered `ok` once durable in the outbox) and over HTTP (the legacy
 * HTTP socket's `POST /results` against the agent API's `POST /events`, keep-alive), `concurrency`
 * senders each, for `seconds` after a warm-up; then how long the backend takes to store the last
 * result sent (the outbox drained).
 */
import { connect } from 'node:net';
import { startAgent, startLegacyClient, waitFor, type Backend } from '../test/harness/index.ts';
import { drive, type DriveResult } from './lib/drive.ts';
import { int, ms, pct, table } from './lib/format.ts';
import { Cleanup, startInfraAndBackend } from './lib/infra.ts';
import type { BenchResult } from './lib/result.ts';

export interface LegacyClientBenchConfig {
  concurrency: number;
  warmupSeconds: number;
  seconds: number;
  /** Distinct check names the results cycle through. */
  checks: number;
}

const envNum = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);

export function legacyClientBenchConfig(): LegacyClientBenchConfig {
  return {
    concurrency: envNum('BENCH_LEGACY_CLIENT_CONCURRENCY', 16),
    warmupSeconds: envNum('BENCH_LEGACY_CLIENT_WARMUP', 3),
    seconds: envNum('BENCH_LEGACY_CLIENT_SECONDS', 15),
    checks: envNum('BENCH_LEGACY_CLIENT_CHECKS', 100),
  };
}

/** Sends `text` on a fresh connection, resolves with the answer once the agent closes. */
function tcpOnce(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    sock.setTimeout(10_000, () => sock.destroy(new Error('no answer within 10 s')));
    sock.on('data', (d) => (answer += d.toString()));
    sock.on('error', reject);
    sock.on('close', () => resolve(answer));
    sock.on('connect', () => sock.end(text));
  });
}

interface Row {
  label: string;
  result: DriveResult;
  /** Seconds from the window's end until the backend stored the last result sent. */
  drainSec: number;
}

async function measure(
  label: string,
  entity: string,
  cfg: LegacyClientBenchConfig,
  backend: Backend,
  pids: Record<string, number>,
  send: (check: string, output: string) => Promise<void>,
): Promise<Row> {
  let n = 0;
  let last = '';
  const result = await drive({
    concurrency: cfg.concurrency,
    warmupMs: cfg.warmupSeconds * 1000,
    measureMs: cfg.seconds * 1000,
    pids,
    send: async () => {
      const i = n++;
      const output = `${label} ${i}`;
      last = output;
      await send(`bench-${i % cfg.checks}`, output);
    },
  });
  const sentLast = last;
  const check = `bench-${(n - 1) % cfg.checks}`;
  const t0 = performance.now();
  await waitFor(
    async () => {
      const r = await backend.get(`/api/core/v2/namespaces/default/events/${entity}/${check}`);
      return r.status === 200 && (r.body as { check?: { output?: string } }).check?.output === sentLast;
    },
    { timeoutMs: 120_000, intervalMs: 100, what: `${label}: the last result stored` },
  );
  return { label, result, drainSec: (performance.now() - t0) / 1000 };
}

/** The relay's own rate limit (10/s by default, as Sensu's) would measure itself, not the inputs. */
const UNLIMITED = ['--events-rate-limit', '100000', '--events-burst-limit', '10000'];

export async function runLegacyClient(cfg: LegacyClientBenchConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  try {
    const { infra, backend } = await startInfraAndBackend('bench-legacy-client', cleanup);
    const legacy = await startLegacyClient({
      name: 'bench-legacy',
      backendUrls: backend.agentUrl,
      logLevel: 'warn',
      extraArgs: UNLIMITED,
    });
    cleanup.add('legacy client', () => legacy.stop());
    const current = await startAgent({
      name: 'bench-current',
      backendUrls: backend.agentUrl,
      logLevel: 'warn',
      extraArgs: UNLIMITED,
    });
    cleanup.add('agent', () => current.stop());
    await waitFor(
      async () => (await fetch(`${legacy.httpUrl}/brew`).catch(() => undefined))?.status === 418,
      {
        timeoutMs: 30_000,
        what: 'the legacy HTTP socket',
      },
    );
    await waitFor(
      async () => (await fetch(`${current.apiUrl}/healthz`).catch(() => undefined))?.status === 200,
      {
        timeoutMs: 30_000,
        what: 'the agent API',
      },
    );
    const pidsOf = (agentPid: number) => ({
      agent: agentPid,
      backend: backend.proc.pid,
      nats: infra.nats.proc.pid,
    });
    const expectOk = (answer: string) => {
      if (answer !== 'ok') throw new Error(`answered "${answer}"`);
    };
    const rows: Row[] = [];
    rows.push(
      await measure(
        'legacy TCP socket',
        'bench-legacy',
        cfg,
        backend,
        pidsOf(legacy.proc.pid),
        async (name, output) =>
          expectOk(await tcpOnce(legacy.socketPort, JSON.stringify({ name, output, status: 1 }))),
      ),
    );
    rows.push(
      await measure(
        'agent TCP socket',
        'bench-current',
        cfg,
        backend,
        pidsOf(current.proc.pid),
        async (name, output) =>
          expectOk(await tcpOnce(current.ports.socket, JSON.stringify({ name, output, status: 1 }))),
      ),
    );
    const post = async (url: string, body: unknown, want: number) => {
      const r = await fetch(url, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      await r.arrayBuffer();
      if (r.status !== want) throw new Error(`status ${r.status}`);
    };
    rows.push(
      await measure(
        'legacy HTTP POST /results',
        'bench-legacy',
        cfg,
        backend,
        pidsOf(legacy.proc.pid),
        (name, output) => post(`${legacy.httpUrl}/results`, { name, output, status: 1 }, 202),
      ),
    );
    rows.push(
      await measure(
        'agent API POST /events',
        'bench-current',
        cfg,
        backend,
        pidsOf(current.proc.pid),
        (name, output) =>
          post(`${current.apiUrl}/events`, { check: { metadata: { name }, output, status: 1 } }, 202),
      ),
    );
    const lines = [
      `${cfg.concurrency} senders in a closed loop, ${cfg.seconds} s windows after ${cfg.warmupSeconds} s warm-up; ` +
        `TCP: one result per connection; drain: window end until the backend stored the last result`,
      '',
      table(
        ['input', 'answered/s', 'p50', 'p99', 'errors', 'drain', 'agent CPU', 'backend CPU', 'others'],
        rows.map((r) => [
          r.label,
          `${int(r.result.rate)}/s`,
          ms(r.result.latency.p50),
          ms(r.result.latency.p99),
          int(r.result.errors),
          `${r.drainSec.toFixed(1)} s`,
          pct(r.result.window.procs.agent!.cpuPct),
          pct(r.result.window.procs.backend!.cpuPct),
          pct(r.result.window.othersPct),
        ]),
      ),
    ];
    const ratio = (a: Row, b: Row) => (a.result.rate / b.result.rate).toFixed(2);
    const summary = [
      `legacy client: TCP ${int(rows[0]!.result.rate)}/s (${ratio(rows[0]!, rows[1]!)} x the agent socket's)`,
      `legacy client: HTTP ${int(rows[2]!.result.rate)}/s (${ratio(rows[2]!, rows[3]!)} x the agent API's)`,
    ];
    return { title: 'legacy client sockets vs the agent inputs (one backend)', lines, summary };
  } finally {
    await cleanup.run();
  }
}
