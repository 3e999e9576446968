// suite-timeout: 420
// suite-exclusive: SIGKILL under load with timed recovery
/**
 * Chaos: no event acknowledged to an agent or a REST client is lost or applied twice when one
 * nats-server, one backend or one etcd member is SIGKILLed (docs/architecture.md, "Atomic turns").
 *
 * Set-up: a three-member etcd cluster, a three-node NATS JetStream cluster, three backends with
 * `--nats-replicas 3` given every etcd and NATS URL, and two real agents given every backend.
 * Load, about 44 events/s: each agent gets events on its local HTTP API (acknowledged = 202, the
 * agent's outbox then owns them), and a REST client posts events to the backends (acknowledged =
 * 201; on anything else it retries the same request, same Idempotency-Key, for up to 30 s, moving to
 * the next backend). Every event has a check name of its own, so each is the first event of its
 * check: the entity actor then writes both its record (with the applied message ids) and the event,
 * the two writes that issue "acknowledged but never stored" is about.
 * Rounds under load: SIGKILL each nats-server in turn (the leader of the events stream first, while
 * it leads), restart it, wait for health; then SIGKILL and restart the backend owning agent a1's
 * entity; then the etcd leader. Finally every acknowledged event must be readable exactly once:
 * one history entry and occurrences 1 (two entries = applied twice).
 * The load and its ledger are in test/cluster/no-loss/load.ts, the read-back in no-loss/read-back.ts.
 */
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  sleep,
  startAgent,
  startBackend,
  startEtcdCluster,
  startNatsCluster,
  waitFor,
  type AgentProc,
  type Backend,
  type EtcdCluster,
  type NatsCluster,
  type Proc,
} from '../harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';
import { shardOf } from '../../actors/runtime/hash.ts';
import { ownerOf } from '../../actors/runtime/placement.ts';
import { ledger, NS, rounds, setRound, startLoad, type Sent } from './no-loss/load.ts';
import {
  backendLogSummary,
  byRound,
  READ_BACK_TIMEOUT_MS,
  readBack,
  type ReadBack,
} from './no-loss/read-back.ts';

const EVENTS_STREAM = 'KV_monitor_events';
const ENTITIES_STREAM = 'KV_monitor_entities';
const BACKENDS = ['b1', 'b2', 'b3'];
const AGENTS = ['a1', 'a2'];
/** How long a killed process stays dead. */
const DOWN_MS = 5000;

let etcd: EtcdCluster | undefined;
let nats: NatsCluster | undefined;
/** The live backend of each name (replaced on restart). */
const backends = new Map<string, Backend>();
/** Every backend process ever started, for the log summary (a restarted backend has a new one). */
const backendProcs: Proc[] = [];
const agents: AgentProc[] = [];

// --- cluster helpers --------------------------------------------------------------------------------

async function launch(name: string, options?: Backend['options']): Promise<Backend> {
  const b = await startBackend(
    options ?? {
      name,
      etcdUrl: etcd!.urls.join(','),
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

/** Every backend answers /health 200 (etcd and NATS reachable from each). */
const allServing = (what: string) =>
  waitFor(
    async () => {
      for (const b of backends.values()) if ((await b.health()).status !== 200) return undefined;
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250, what },
  );

/** The backend owning an agent's entity actor, by the placement every node computes. */
const ownerOfEntity = (entity: string) =>
  ownerOf(shardOf('entity', `${NS}/${entity}`, SHARD_COUNT), BACKENDS)!;

async function natsRound(i: number, done: Set<string>): Promise<void> {
  const eventsLeader = await nats!.streamLeader(EVENTS_STREAM);
  const entitiesLeader = await nats!.streamLeader(ENTITIES_STREAM);
  const left = nats!.nodes.filter((n) => !done.has(n.name));
  // The leader of the events stream, while it is one we have not killed yet: that is what loses events.
  const target = left.find((n) => n.name === eventsLeader) ?? left[0]!;
  done.add(target.name);
  const roles = [
    target.name === eventsLeader && 'events leader',
    target.name === entitiesLeader && 'entities leader',
  ].filter(Boolean);
  setRound(`nats-${i}: SIGKILL ${target.name}${roles.length ? ` (${roles.join(', ')})` : ''}`);
  await target.kill();
  await sleep(DOWN_MS);
  await target.restart();
  await nats!.waitHealthy(30_000);
  await allServing(`the backends to serve after ${target.name} came back`);
}

async function backendRound(): Promise<void> {
  const name = ownerOfEntity(AGENTS[0]!);
  const old = backends.get(name)!;
  setRound(`backend: SIGKILL ${name} (owner of ${AGENTS[0]})`);
  await old.kill('SIGKILL');
  await sleep(DOWN_MS);
  await launch(name, old.options);
  await allServing(`the backends to serve after ${name} came back`);
}

async function etcdRound(): Promise<void> {
  const target = (await etcd!.leader()) ?? etcd!.members[0]!;
  setRound(`etcd: SIGKILL ${target.name} (leader)`);
  await target.kill();
  await sleep(DOWN_MS);
  await target.restart();
  await etcd!.waitHealthy(30_000);
  await allServing(`the backends to serve after ${target.name} came back`);
}

// --- the suite --------------------------------------------------------------------------------------

let results: ReadBack | undefined;

test.before(async () => {
  [etcd, nats] = await Promise.all([startEtcdCluster({ size: 3 }), startNatsCluster({ size: 3 })]);
  // The first backend creates the replicated buckets and streams; the others find them.
  await launch(BACKENDS[0]!);
  await Promise.all(BACKENDS.slice(1).map((n) => launch(n)));
  await allServing('three backends');
  const urls = BACKENDS.map((n) => backends.get(n)!.agentUrl);
  for (const name of AGENTS) {
    agents.push(
      await startAgent({
        name,
        backendUrls: urls,
        keepaliveInterval: 2,
        warning: 30,
        logLevel: 'info',
        // The agents must not be the bottleneck: far above the rate they are fed.
        extraArgs: ['--events-rate-limit', '500', '--events-burst-limit', '500'],
      }),
    );
  }
  const b = backends.get(BACKENDS[0]!)!;
  for (const name of AGENTS) {
    await waitFor(
      async () => (await b.get(`/api/core/v2/namespaces/${NS}/events/${name}/keepalive`)).status === 200,
      { timeoutMs: 30_000, what: `agent ${name} registered` },
    );
  }
});

test.after(async () => {
  for (const a of agents) await a.kill().catch(() => {});
  for (const b of backends.values()) await b.kill().catch(() => {});
  await Promise.all([nats?.stopAll(), etcd?.stopAll()]);
});

test('under load, each nats-server, one backend and one etcd member are SIGKILLed and restarted, and the cluster serves again each time', async () => {
  assert.is(backends.size, 3, 'three backends started');
  const load = startLoad(agents, backends);
  const started = Date.now();
  try {
    await sleep(5000);
    const killed = new Set<string>();
    for (let i = 1; i <= nats!.nodes.length; i++) await natsRound(i, killed);
    await backendRound();
    await etcdRound();
    setRound('cool-down');
    await sleep(3000);
  } finally {
    setRound('stopped');
    await load.stop();
  }
  console.log(
    `[no-loss] load ran ${((Date.now() - started) / 1000).toFixed(0)}s; ${ledger.length} events sent, ${ledger.filter((s) => s.acked).length} acknowledged`,
  );
  for (const r of rounds) {
    const sent = ledger.filter((s) => s.round === r);
    if (sent.length === 0) continue;
    const acked = sent.filter((s) => s.acked);
    console.log(
      `[no-loss]   ${r}: sent ${sent.length}, acknowledged ${acked.length} (agent ${acked.filter((s) => s.source === 'agent').length}, rest ${acked.filter((s) => s.source === 'rest').length})`,
    );
  }
  const unacked = ledger.filter((s) => !s.acked);
  if (unacked.length)
    console.log(
      `[no-loss] not acknowledged: ${unacked.length}, e.g. ${unacked
        .slice(0, 5)
        .map((s) => `${s.check}: ${s.lastError}`)
        .join('; ')}`,
    );
  // The load reached the cluster in every round (a dead load generator proves nothing).
  for (const r of rounds.filter((x) => x !== 'stopped')) {
    assert.ok(
      ledger.some((s) => s.round === r && s.acked && s.source === 'rest'),
      `REST events were acknowledged in round "${r}"`,
    );
    assert.ok(
      ledger.some((s) => s.round === r && s.acked && s.source === 'agent'),
      `agent events were acknowledged in round "${r}"`,
    );
  }
});

test('every event acknowledged to an agent (202) or a REST client (201) is stored', async () => {
  const acked = ledger.filter((s) => s.acked);
  assert.ok(acked.length > 0, 'some events were acknowledged');
  results = await readBack(acked, backends);
  const missing = acked.filter((s) => !results!.stored.has(s));
  const lost = missing.filter((s) => !results!.unreadable.has(s));
  const note = (s: Sent) => (s.source === 'rest' ? `(rest via ${s.via})` : '(agent)');
  console.log(
    `[no-loss] lost: ${lost.length} of ${acked.length} acknowledged (agent ${lost.filter((s) => s.source === 'agent').length}, rest ${lost.filter((s) => s.source === 'rest').length}), unreadable ${missing.length - lost.length}; ${backendLogSummary(backendProcs)}`,
  );
  assert.equal(
    missing.length,
    0,
    `${lost.length} of ${acked.length} acknowledged events are not stored (404) after ${READ_BACK_TIMEOUT_MS / 1000}s, by the round they were sent in:` +
      byRound(lost.map((s) => ({ s, note: note(s) }))) +
      (missing.length > lost.length
        ? `\n${missing.length - lost.length} more could not be read:${byRound(missing.filter((s) => results!.unreadable.has(s)).map((s) => ({ s, note: results!.unreadable.get(s) })))}`
        : '') +
      `\n${backendLogSummary(backendProcs)}`,
  );
});

test('no acknowledged event is applied twice: each stored one has exactly one history entry and occurrences 1', async () => {
  const acked = ledger.filter((s) => s.acked);
  results ??= await readBack(acked, backends);
  const doubled = acked.filter((s) => {
    const st = results!.stored.get(s);
    return st !== undefined && (st.history !== 1 || st.occurrences !== 1);
  });
  console.log(`[no-loss] doubled: ${doubled.length} of ${acked.length} acknowledged`);
  assert.equal(
    doubled.length,
    0,
    `${doubled.length} acknowledged events were applied more than once, by the round they were sent in:` +
      byRound(
        doubled.map((s) => ({
          s,
          note: `(history ${results!.stored.get(s)!.history}, occurrences ${results!.stored.get(s)!.occurrences}, ${s.source} via ${s.via})`,
        })),
      ),
  );
});

test.run();
