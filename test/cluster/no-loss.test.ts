// suite-timeout: 420
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
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  adminAuth,
  getJson,
  loud,
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

const NS = 'default';
const EVENTS_STREAM = 'KV_monitor_events';
const ENTITIES_STREAM = 'KV_monitor_entities';
const BACKENDS = ['b1', 'b2', 'b3'];
const AGENTS = ['a1', 'a2'];
const PROXIES = ['proxy-0', 'proxy-1', 'proxy-2', 'proxy-3'];
/** Events per second: per agent, and for the REST client. Modest: the machine has two cores. */
const AGENT_RATE = 12;
const REST_RATE = 20;
/** A good REST client gives up on an event after this long; only a 201 counts as acknowledged. */
const REST_RETRY_WINDOW_MS = 30_000;
const REST_ATTEMPT_TIMEOUT_MS = 10_000;
/** How long a killed process stays dead. */
const DOWN_MS = 5000;
/** After the load stops: bound on the wait for every acknowledged event to be readable. */
const READ_BACK_TIMEOUT_MS = 90_000;

let etcd: EtcdCluster | undefined;
let nats: NatsCluster | undefined;
/** The live backend of each name (replaced on restart). */
const backends = new Map<string, Backend>();
/** Every backend process ever started, for the log summary (a restarted backend has a new one). */
const backendProcs: Proc[] = [];
const agents: AgentProc[] = [];

// --- ledger ---------------------------------------------------------------------------------------

interface Sent {
  source: 'agent' | 'rest';
  /** The agent, or the backends the REST client tried. */
  via: string;
  entity: string;
  check: string;
  /** The chaos round running when the event was sent. */
  round: string;
  acked: boolean;
  attempts: number;
  lastError?: string;
}

const ledger: Sent[] = [];
let round = 'warm-up';
const rounds: string[] = ['warm-up'];
const setRound = (name: string) => {
  round = name;
  rounds.push(name);
  console.log(`[no-loss] ${new Date().toISOString()} round: ${name}`);
};

const pad = (n: number) => String(n).padStart(6, '0');

// --- load -------------------------------------------------------------------------------------------

/** Calls `fn(seq)` `rate` times a second until `stop()`; never bursts to catch up more than a second. */
function paced(rate: number, stopped: () => boolean, fn: (seq: number) => void): Promise<void> {
  return (async () => {
    const step = 1000 / rate;
    let next = Date.now();
    for (let seq = 1; !stopped(); seq++) {
      fn(seq);
      next += step;
      const now = Date.now();
      if (now - next > 1000) next = now; // the event loop stalled: skip rather than flood
      await sleep(Math.max(0, next - now));
    }
  })();
}

/** One event to an agent's HTTP API; no retry (a retry after a lost 202 would be a second event). */
async function agentEvent(agent: AgentProc, seq: number, inflight: Set<Promise<void>>): Promise<void> {
  const rec: Sent = {
    source: 'agent',
    via: agent.name,
    entity: agent.name,
    check: `${agent.name}-${pad(seq)}`,
    round,
    acked: false,
    attempts: 1,
  };
  ledger.push(rec);
  const p = (async () => {
    try {
      const r = await getJson(`${agent.apiUrl}/events`, {
        method: 'POST',
        body: {
          check: { metadata: { name: rec.check }, status: 0, output: `sent in ${rec.round}`, interval: 60 },
        },
        signal: AbortSignal.timeout(REST_ATTEMPT_TIMEOUT_MS),
      });
      if (r.status === 202) rec.acked = true;
      else rec.lastError = `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
    } catch (err) {
      rec.lastError = (err as Error).message;
    }
  })();
  inflight.add(p);
  await p.finally(() => inflight.delete(p));
}

/**
 * One logical REST event, retried as a good client does: same body and same Idempotency-Key header,
 * next backend each attempt, until a 201 or the window ends.
 */
async function restEvent(seq: number, inflight: Set<Promise<void>>): Promise<void> {
  const entity = PROXIES[seq % PROXIES.length]!;
  const key = randomUUID();
  const rec: Sent = {
    source: 'rest',
    via: '',
    entity,
    check: `r-${pad(seq)}`,
    round,
    acked: false,
    attempts: 0,
  };
  ledger.push(rec);
  // No `id` in the body: a plain REST client sends none, and the Idempotency-Key header is the
  // contract for its retries.
  const body = {
    entity: { metadata: { name: entity, namespace: NS }, entity_class: 'proxy' },
    check: {
      metadata: { name: rec.check, namespace: NS },
      status: 0,
      output: `sent in ${rec.round}`,
      interval: 60,
    },
  };
  const p = (async () => {
    const deadline = Date.now() + REST_RETRY_WINDOW_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const live = [...backends.values()];
      const b = live[(seq + attempt) % live.length]!;
      rec.attempts++;
      rec.via += `${rec.via ? ',' : ''}${b.name}`;
      try {
        const r = await getJson(`${b.apiUrl}/api/core/v2/namespaces/${NS}/events`, {
          method: 'POST',
          headers: { ...adminAuth, 'Idempotency-Key': key },
          body,
          signal: AbortSignal.timeout(Math.max(1, Math.min(REST_ATTEMPT_TIMEOUT_MS, deadline - Date.now()))),
        });
        if (r.status === 201) {
          rec.acked = true;
          return;
        }
        rec.lastError = `${b.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
      } catch (err) {
        rec.lastError = `${b.name}: ${(err as Error).message}`;
      }
      await sleep(Math.min(1000, 100 * 2 ** attempt));
    }
  })();
  inflight.add(p);
  await p.finally(() => inflight.delete(p));
}

/** The whole load: both agents and the REST client, paced, until stop(). */
function startLoad(): { stop(): Promise<void> } {
  let stopped = false;
  const inflight = new Set<Promise<void>>();
  const loops = [
    ...agents.map((a) =>
      paced(
        AGENT_RATE,
        () => stopped,
        (seq) => {
          void agentEvent(a, seq, inflight);
        },
      ),
    ),
    paced(
      REST_RATE,
      () => stopped,
      (seq) => {
        void restEvent(seq, inflight);
      },
    ),
  ];
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      // Every REST event ends within its retry window: this wait is bounded by it.
      await Promise.all([...inflight]);
    },
  };
}

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

// --- read-back --------------------------------------------------------------------------------------

interface Stored {
  history: number;
  occurrences: number;
}
const keyOf = (entity: string, check: string) => `${entity}/${check}`;

/** Every event of the namespace, by `entity/check`, one list call per page. */
async function listEvents(b: Backend): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  let cont: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const q: string = `limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await b.get(`/api/core/v2/namespaces/${NS}/events?${q}`, {
      signal: AbortSignal.timeout(30_000),
    });
    if (r.status !== 200 || !Array.isArray(r.body))
      throw new Error(`list events: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    for (const e of r.body) {
      out.set(keyOf(e.entity?.metadata?.name, e.check?.metadata?.name), {
        history: e.check?.history?.length ?? 0,
        occurrences: e.check?.occurrences ?? 0,
      });
    }
    cont = r.headers.get('monitor-continue');
    if (!cont) return out;
  }
  throw new Error('list events: more than 1000 pages');
}

/** One event straight from KV (the list comes from a read model that may trail it); undefined = 404. */
async function getEvent(b: Backend, entity: string, check: string): Promise<Stored | undefined> {
  const r = await b.get(`/api/core/v2/namespaces/${NS}/events/${entity}/${check}`);
  if (r.status === 404) return undefined;
  if (r.status !== 200)
    throw new Error(`GET ${entity}/${check}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return { history: r.body.check?.history?.length ?? 0, occurrences: r.body.check?.occurrences ?? 0 };
}

interface ReadBack {
  /** What is stored for each acknowledged event; absent = not stored (404 and not listed). */
  stored: Map<Sent, Stored>;
  /** Events whose last read failed (not a 404): neither proven lost nor proven stored. */
  unreadable: Map<Sent, string>;
}

/**
 * Polls until every acknowledged event is readable or READ_BACK_TIMEOUT_MS passes. Each pass reads
 * everything afresh, so the answer is the last state (a late resend that doubles an event counts).
 */
async function readBack(acked: Sent[]): Promise<ReadBack> {
  const deadline = Date.now() + READ_BACK_TIMEOUT_MS;
  for (let pass = 0; ; pass++) {
    const out: ReadBack = { stored: new Map(), unreadable: new Map() };
    // Each pass asks another backend: one that cannot read must not decide the outcome.
    const live = [...backends.values()];
    const b = live[pass % live.length]!;
    const listed = await listEvents(b).catch(() => new Map<string, Stored>());
    for (const s of acked) {
      const fromList = listed.get(keyOf(s.entity, s.check));
      if (fromList) {
        out.stored.set(s, fromList);
        continue;
      }
      try {
        const one = await getEvent(b, s.entity, s.check);
        if (one) out.stored.set(s, one);
      } catch (err) {
        out.unreadable.set(s, (err as Error).message);
      }
    }
    const missing = acked.length - out.stored.size;
    if (missing === 0 || Date.now() > deadline) return out;
    console.log(
      `[no-loss] ${missing} acknowledged events not readable yet (${out.unreadable.size} reads failed)`,
    );
    await sleep(3000);
  }
}

/** "round: ids" lines, one per round, for assertion messages. */
function byRound(items: Array<{ s: Sent; note?: string }>): string {
  const groups = new Map<string, string[]>();
  for (const { s, note } of items) {
    const g = groups.get(s.round) ?? [];
    g.push(`${s.entity}/${s.check}${note ? ` ${note}` : ''}`);
    groups.set(s.round, g);
  }
  return [...groups]
    .map(
      ([r, ids]) =>
        `\n  [${r}] ${ids.length}: ${ids.slice(0, 40).join(', ')}${ids.length > 40 ? ', ...' : ''}`,
    )
    .join('');
}

/** What the backends logged about failed state writes: context for a failure. */
function backendLogSummary(): string {
  let failedWrites = 0,
    jsUnavailable = 0,
    conflicts = 0;
  for (const p of backendProcs) {
    for (const l of p.jsonLines()) {
      if (l.msg !== 'state write failed; reloading the actor') continue;
      failedWrites++;
      if (/JetStream is not available for bucket monitor_events/.test(String(l.error))) jsUnavailable++;
      if (/revision conflict/.test(String(l.error))) conflicts++;
    }
  }
  return `backends logged ${failedWrites} failed state writes (${jsUnavailable} "JetStream is not available for bucket monitor_events", ${conflicts} revision conflicts)`;
}

// --- the suite --------------------------------------------------------------------------------------

let results: ReadBack | undefined;

test.before(
  loud(async () => {
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
  }),
);

test.after(async () => {
  for (const a of agents) await a.kill().catch(() => {});
  for (const b of backends.values()) await b.kill().catch(() => {});
  await Promise.all([nats?.stopAll(), etcd?.stopAll()]);
});

test('under load, each nats-server, one backend and one etcd member are SIGKILLed and restarted, and the cluster serves again each time', async () => {
  assert.is(backends.size, 3, 'three backends started');
  const load = startLoad();
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
  results = await readBack(acked);
  const missing = acked.filter((s) => !results!.stored.has(s));
  const lost = missing.filter((s) => !results!.unreadable.has(s));
  const note = (s: Sent) => (s.source === 'rest' ? `(rest via ${s.via})` : '(agent)');
  console.log(
    `[no-loss] lost: ${lost.length} of ${acked.length} acknowledged (agent ${lost.filter((s) => s.source === 'agent').length}, rest ${lost.filter((s) => s.source === 'rest').length}), unreadable ${missing.length - lost.length}; ${backendLogSummary()}`,
  );
  assert.equal(
    missing.length,
    0,
    `${lost.length} of ${acked.length} acknowledged events are not stored (404) after ${READ_BACK_TIMEOUT_MS / 1000}s, by the round they were sent in:` +
      byRound(lost.map((s) => ({ s, note: note(s) }))) +
      (missing.length > lost.length
        ? `\n${missing.length - lost.length} more could not be read:${byRound(missing.filter((s) => results!.unreadable.has(s)).map((s) => ({ s, note: results!.unreadable.get(s) })))}`
        : '') +
      `\n${backendLogSummary()}`,
  );
});

test('no acknowledged event is applied twice: each stored one has exactly one history entry and occurrences 1', async () => {
  const acked = ledger.filter((s) => s.acked);
  results ??= await readBack(acked);
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
