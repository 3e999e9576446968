// suite-timeout: 600
// suite-exclusive: stop deadlines of a cluster, timed
/**
 * A graceful stop under load (docs/architecture.md#stopping-a-node): a backend given SIGTERM exits 0
 * within --shutdown-timeout, its agents are back on other nodes within 10 s of the signal, no event
 * acknowledged to an agent (202) or a REST client (201) is lost or applied twice, and no keepalive
 * alert fires for an agent that only moved. Then a rolling restart: each backend in turn stopped
 * with SIGTERM and started again with its name and state directory, with the same promises.
 *
 * Set-up: one etcd, a three-node NATS cluster, three backends (`--nats-replicas 3`), three real
 * agents given every backend URL, keepalives every 2 s with a 6 s warning timeout. The load (agent
 * HTTP API and a REST client) and its read-back are the no-loss suite's (test/cluster/no-loss/).
 */
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  sleep,
  startAgent,
  startBackend,
  startEtcd,
  startNatsCluster,
  waitFor,
  type AgentProc,
  type Backend,
  type EtcdServer,
  type NatsCluster,
  type Proc,
} from '../harness/index.ts';
import { ledger, NS, setRound, startLoad, type Sent } from './no-loss/load.ts';
import { backendLogSummary, byRound, readBack, type ReadBack } from './no-loss/read-back.ts';

const BACKENDS = ['b1', 'b2', 'b3'];
const AGENTS = ['g1', 'g2', 'g3'];
const KEEPALIVE_INTERVAL = 2;
const KEEPALIVE_WARNING = 6;
/** --shutdown-timeout's default: a stop that takes longer exits 1. */
const STOP_BOUND_MS = 20_000;
const RECONNECT_BOUND_MS = 10_000;

let etcd: EtcdServer | undefined;
let nats: NatsCluster | undefined;
/** The live backend of each name (replaced on restart, absent while stopped). */
const backends = new Map<string, Backend>();
const backendProcs: Proc[] = [];
const agents: AgentProc[] = [];
let load: { stop(): Promise<void> } | undefined;
let results: ReadBack | undefined;

/** Keepalive events seen with a status other than 0, as `agent: status (output)`. */
const alerts: string[] = [];
let watching = true;
let watcher: Promise<void> | undefined;

async function launch(name: string, options?: Backend['options']): Promise<Backend> {
  const b = await startBackend(
    options ?? {
      name,
      etcdUrl: etcd!.url,
      natsUrl: nats!.urls.join(','),
      logLevel: 'info',
      extraArgs: ['--nats-replicas', '3'],
      readyTimeoutMs: 60_000,
    },
  );
  backends.set(name, b);
  backendProcs.push(b.proc);
  return b;
}

const readyOf = (b: Backend) => b.ready().catch(() => undefined);
const isReady = async (b: Backend) => (await readyOf(b))?.status === 200;

/** What the other nodes' /ready said while one stopped: every 503 reason, and polls none was ready. */
const survivorReasons: string[] = [];
const noneReady: string[] = [];

/** Polls the /ready of `others` every 200 ms until `done()`; records their reasons and outages. */
async function watchSurvivors(others: Backend[], done: () => boolean): Promise<void> {
  while (!done()) {
    const answers = await Promise.all(others.map(readyOf));
    answers.forEach((r, i) => {
      if (r?.status !== 200)
        survivorReasons.push(`${others[i]!.name}: ${JSON.stringify(r?.body ?? 'no answer')}`);
    });
    if (answers.every((r) => r?.status !== 200)) noneReady.push(new Date().toISOString());
    await sleep(200);
  }
}

const allReady = (what: string) =>
  waitFor(
    async () => {
      if (backends.size !== BACKENDS.length) return undefined;
      for (const b of backends.values()) if (!(await isReady(b))) return undefined;
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 250, what },
  );

/** The backend (name) each agent's latest connection went to, from the agent's own log. */
function connectionOf(a: AgentProc): { backend: string; at: number } | undefined {
  const lines = a.proc.jsonLines().filter((l) => l.msg === 'connected to backend');
  const last = lines[lines.length - 1];
  return last ? { backend: String(last.backend_id), at: Date.parse(last.time) } : undefined;
}

/** Polls every agent's keepalive event; anything but status 0 is an alert. */
function watchKeepalives(): Promise<void> {
  return (async () => {
    for (let i = 0; watching; i++) {
      const live = [...backends.values()];
      const b = live[i % Math.max(1, live.length)];
      if (b)
        for (const a of AGENTS) {
          const r = await b
            .get(`/api/core/v2/namespaces/${NS}/events/${a}/keepalive`, { signal: AbortSignal.timeout(2000) })
            .catch(() => undefined);
          const status = r?.status === 200 ? r.body?.check?.status : undefined;
          if (status !== undefined && status !== 0)
            alerts.push(`${a}: status ${status} (${r!.body.check.output}) at ${new Date().toISOString()}`);
        }
      await sleep(500);
    }
  })();
}

/**
 * SIGTERM to a backend; checks the exit (0, within the bound) and that its agents connected to
 * another node within RECONNECT_BOUND_MS of the signal. Answers the stopped backend's options.
 */
async function gracefulStop(name: string): Promise<Backend['options']> {
  const b = backends.get(name)!;
  const moving = agents.filter((a) => connectionOf(a)?.backend === name);
  let watched = false;
  const survivors = watchSurvivors(
    [...backends.values()].filter((o) => o !== b),
    () => watched,
  );
  const signalledAt = Date.now();
  const exit = await b.stop(STOP_BOUND_MS + 10_000);
  const stopMs = Date.now() - signalledAt;
  backends.delete(name);
  assert.is(exit.code, 0, `${name} exit ${JSON.stringify(exit)}\n${b.proc.tail(20)}`);
  assert.ok(stopMs < STOP_BOUND_MS, `${name} stopped in ${stopMs} ms`);
  const moves: string[] = [];
  for (const a of moving) {
    const back = await waitFor(
      () => {
        const c = connectionOf(a);
        return c && c.at >= signalledAt - 50 && c.backend !== name ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `${a.name} connected to another backend` },
    );
    const took = back.at - signalledAt;
    moves.push(`${a.name} -> ${back.backend} in ${took} ms`);
    assert.ok(took < RECONNECT_BOUND_MS, `${a.name} back on ${back.backend} after ${took} ms`);
  }
  // Until the survivors took the stopped node's shards (a handoff is quick; this is ample).
  await sleep(3000);
  watched = true;
  await survivors;
  console.log(
    `[graceful-stop] ${name} stopped in ${stopMs} ms (exit ${exit.code}); agents moved: ${moves.join(', ') || 'none'}`,
  );
  return b.options;
}

test.before(async () => {
  [etcd, nats] = await Promise.all([startEtcd(), startNatsCluster({ size: 3 })]);
  // The first backend creates the replicated buckets and streams; the others find them.
  await launch(BACKENDS[0]!);
  await Promise.all(BACKENDS.slice(1).map((n) => launch(n)));
  await allReady('three backends ready');
  const urls = BACKENDS.map((n) => backends.get(n)!.agentUrl);
  for (const name of AGENTS)
    agents.push(
      await startAgent({
        name,
        backendUrls: urls,
        keepaliveInterval: KEEPALIVE_INTERVAL,
        warning: KEEPALIVE_WARNING,
        logLevel: 'info',
        extraArgs: ['--events-rate-limit', '500', '--events-burst-limit', '500'],
      }),
    );
  const b = backends.get(BACKENDS[0]!)!;
  for (const name of AGENTS)
    await waitFor(
      async () => (await b.get(`/api/core/v2/namespaces/${NS}/events/${name}/keepalive`)).status === 200,
      { timeoutMs: 30_000, what: `agent ${name} registered` },
    );
  watcher = watchKeepalives();
  load = startLoad(agents, backends);
});

test.after(async () => {
  watching = false;
  await load?.stop().catch(() => {});
  await watcher?.catch(() => {});
  for (const a of agents) await a.kill().catch(() => {});
  for (const b of backends.values()) await b.kill().catch(() => {});
  await Promise.all([nats?.stopAll(), etcd?.stop()]);
});

test('SIGTERM of the backend holding the most agents: exit 0 within 20 s, its agents on other nodes within 10 s', async () => {
  await sleep(5000);
  const counts = new Map(BACKENDS.map((n) => [n, 0]));
  for (const a of agents) {
    const c = connectionOf(a)?.backend;
    if (c) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const [target, held] = [...counts].sort((x, y) => y[1] - x[1])[0]!;
  assert.ok(held > 0, `some backend holds agents: ${JSON.stringify([...counts])}`);
  setRound(`SIGTERM ${target} (${held} agents)`);
  const options = await gracefulStop(target);
  setRound(`${target} down`);
  await sleep(5000);
  setRound(`${target} restarted`);
  await launch(target, options);
  await allReady(`${target} back and every node ready`);
});

test('rolling restart: each backend in turn stopped with SIGTERM (exit 0) and started again', async () => {
  for (const name of BACKENDS) {
    setRound(`rolling: SIGTERM ${name}`);
    const options = await gracefulStop(name);
    setRound(`rolling: start ${name}`);
    await launch(name, options);
    await allReady(`every node ready after ${name} restarted`);
    await sleep(3000);
  }
  setRound('cool-down');
  await sleep(KEEPALIVE_WARNING * 1000);
});

test('every event acknowledged to an agent (202) or a REST client (201) is stored exactly once', async () => {
  setRound('stopped');
  await load!.stop();
  const acked = ledger.filter((s) => s.acked);
  console.log(`[graceful-stop] ${ledger.length} events sent, ${acked.length} acknowledged`);
  assert.ok(acked.length > 100, `${acked.length} acknowledged`);
  assert.ok(
    acked.some((s) => s.source === 'agent') && acked.some((s) => s.source === 'rest'),
    'both agents and the REST client got events acknowledged',
  );
  results = await readBack(acked, backends);
  const missing = acked.filter((s) => !results!.stored.has(s));
  const note = (s: Sent) => `(${s.source} via ${s.via})`;
  assert.is(
    missing.length,
    0,
    `${missing.length} acknowledged events are not stored:${byRound(missing.map((s) => ({ s, note: note(s) })))}\n${backendLogSummary(backendProcs)}`,
  );
  const doubled = acked.filter((s) => {
    const st = results!.stored.get(s)!;
    return st.history !== 1 || st.occurrences !== 1;
  });
  assert.is(
    doubled.length,
    0,
    `${doubled.length} acknowledged events were applied more than once:${byRound(doubled.map((s) => ({ s, note: note(s) })))}`,
  );
});

test('while a node stopped, the others stayed ready: never all at once unready, no "shards" reason', async () => {
  console.log(`[graceful-stop] survivors' 503s: ${survivorReasons.length}`);
  assert.equal(
    noneReady,
    [],
    `no survivor was ready at: ${noneReady.join(', ')}\n${survivorReasons.join('\n')}`,
  );
  assert.equal(
    survivorReasons.filter((r) => r.includes('shards:')),
    [],
    'survivors never counted shards being handed to them as not held',
  );
});

test('no keepalive alert: every keepalive event and its history stayed at status 0', async () => {
  watching = false;
  await watcher;
  assert.equal(alerts, [], `keepalive alerts:\n${alerts.join('\n')}`);
  const b = [...backends.values()][0]!;
  for (const a of AGENTS) {
    const r = await b.get(`/api/core/v2/namespaces/${NS}/events/${a}/keepalive`);
    assert.is(r.status, 200, `${a} keepalive event`);
    assert.is(r.body.check.status, 0, `${a} status`);
    const history: Array<{ status: number }> = r.body.check.history ?? [];
    assert.ok(history.length > 0, `${a} has a history`);
    assert.equal(
      history.filter((h) => h.status !== 0),
      [],
      `${a} history`,
    );
  }
});

test.run();
