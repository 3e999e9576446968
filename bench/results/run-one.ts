/** bench results: one run = fresh etcd + nats, K backends, N simulated agents pumping results. */
import { startBackend, waitFor, type Backend } from '../../test/harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';
import { instrumentation, profileLines, startProfile } from '../lib/backend-ctl.ts';
import { int, ms, note, secs } from '../lib/format.ts';
import { Cleanup, sleep, startInfra } from '../lib/infra.ts';
import { ProcMeter, type WindowFigures } from '../lib/procstat.ts';
import { Samples } from '../lib/stats.ts';
import type { ResultsConfig } from './config.ts';
import { SimResultAgent, Tally } from './sim.ts';

export interface RunFigures {
  nodes: number;
  opened: number;
  rate: number;
  latency: ReturnType<Samples['summary']>;
  sentInWindow: number;
  notOk: number;
  notOkCodes: Map<string, number>;
  unknown: number;
  closed: number;
  /** Events still without an ack 10 s after the pumping stopped. */
  lost: number;
  window?: WindowFigures;
  profile?: string[];
  error?: string;
}

export async function runOne(nodes: number, cfg: ResultsConfig): Promise<RunFigures> {
  const cleanup = new Cleanup();
  const tally = new Tally(new Samples());
  const fig: RunFigures = {
    nodes,
    opened: 0,
    rate: NaN,
    latency: new Samples().summary(),
    sentInWindow: 0,
    notOk: 0,
    notOkCodes: tally.notOkCodes,
    unknown: 0,
    closed: 0,
    lost: 0,
  };
  const agents: SimResultAgent[] = [];
  const tag = `results ${nodes} node${nodes > 1 ? 's' : ''}`;
  try {
    note(`${tag}: starting etcd, nats-server and ${nodes} backend(s)`);
    const infra = await startInfra();
    cleanup.add('etcd', () => infra.etcd.stop());
    cleanup.add('nats', () => infra.nats.stop());
    const ctl = instrumentation();
    const backends: Backend[] = [];
    for (let i = 0; i < nodes; i++) {
      // Only the first runs `init`: the admin and API key live in the shared etcd.
      const b = await startBackend({
        name: `bench-results-${i}`,
        etcdUrl: infra.etcd.url,
        natsUrl: infra.nats.url,
        logLevel: 'warn',
        readyTimeoutMs: 60_000,
        init: i === 0,
        env: i === 0 ? ctl.env : undefined,
      });
      cleanup.add(`backend ${i}`, () => b.stop(20_000));
      backends.push(b);
    }
    const owned = async () => {
      let sum = 0;
      for (const b of backends)
        sum += ((await b.health()).body as { shards?: { owned?: number } })?.shards?.owned ?? 0;
      return sum;
    };
    await waitFor(async () => (await owned()) === SHARD_COUNT, {
      timeoutMs: 90_000,
      what: 'the backends to own every shard between them',
    });
    await sleep(2000);

    for (let i = 0; i < cfg.agents; i++)
      agents.push(
        new SimResultAgent(`results-${i}`, backends[i % nodes]!.agentUrl, cfg.checks, cfg.window, tally),
      );
    cleanup.add('agent sockets', async () => {
      for (const a of agents) a.close();
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(cfg.connectConcurrency, agents.length) }, async () => {
        while (next < agents.length) if (await agents[next++]!.connect()) fig.opened++;
      }),
    );
    note(
      `${tag}: ${fig.opened}/${cfg.agents} agents connected; letting their keepalives register the entities`,
    );
    if (fig.opened === 0) throw new Error('no agent could connect');
    await sleep(3000);

    for (const a of agents) a.start();
    note(`${tag}: pumping, window ${cfg.window} per agent; warm-up ${cfg.warmupSeconds} s`);
    await sleep(cfg.warmupSeconds * 1000);

    const pids: Record<string, number> = {};
    backends.forEach((b, i) => {
      pids[`backend${nodes > 1 ? i : ''}`] = b.proc.pid;
    });
    Object.assign(pids, { nats: infra.nats.proc.pid, etcd: infra.etcd.proc.pid, client: process.pid });
    const prof = cfg.profile ? await startProfile(backends[0]!, ctl, `backend-results-${nodes}`) : undefined;
    const a0 = tally.acked,
      s0 = tally.sent,
      n0 = tally.notOk;
    const meter = new ProcMeter(pids).start();
    tally.recording = true;
    const w0 = performance.now();
    let last = a0;
    for (let t = 0; t < cfg.seconds; t += 5) {
      await sleep(Math.min(5, cfg.seconds - t) * 1000);
      note(`${tag}: ${int((tally.acked - last) / Math.min(5, cfg.seconds - t))} acks/s`);
      last = tally.acked;
    }
    tally.recording = false;
    const took = (performance.now() - w0) / 1000;
    fig.window = meter.stop();
    fig.rate = (tally.acked - a0) / took;
    fig.sentInWindow = tally.sent - s0;
    fig.latency = tally.latency.summary();
    fig.notOk = tally.notOk - n0;
    if (prof) {
      const file = await prof.stop();
      if (file) fig.profile = profileLines(file, 25);
    }
    note(
      `${tag}: ${int(fig.rate)} acked/s over ${secs(took)}, p50 ${ms(fig.latency.p50)} p99 ${ms(fig.latency.p99)}; draining`,
    );

    for (const a of agents) a.stop();
    const pending = () => agents.reduce((s, a) => s + a.pending, 0);
    try {
      await waitFor(async () => pending() === 0, {
        timeoutMs: 10_000,
        intervalMs: 100,
        what: 'the last acks',
      });
    } catch {
      /* counted below */
    }
    fig.lost = pending();
    fig.unknown = tally.unknown;
    fig.closed = tally.closed;
    return fig;
  } catch (err) {
    fig.error = (err as Error).message;
    return fig;
  } finally {
    note(`${tag}: stopping`);
    await cleanup.run();
  }
}
