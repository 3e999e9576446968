// suite-timeout: 420
// suite-exclusive: lease and freeze timings of three nodes; CPU taken by another suite delays heartbeats
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { Etcd3 } from 'etcd3';
import {
  sleep,
  startAgent,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { etcdKeys, SHARD_COUNT, shardOfOwnerKey } from '../../proto/names.ts';
import { shardOf } from '../../actors/runtime/hash.ts';
import { ownerOf } from '../../actors/runtime/placement.ts';

// Three backend processes sharing one etcd and one nats-server: single ownership of every shard,
// deadlines that survive SIGKILL of their node, a frozen node that stops on its own before its
// lease runs out, and a fourth node joining without losing or doubling a deadline.

const LEASE_TTL = 5;
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let etcd: Etcd3;
const backends = new Map<string, Backend>();
const agents: AgentProc[] = [];

const launch = async (name: string) => {
  const b = await startBackend({ name, etcdUrl: etcdSvc.url, natsUrl: natsSvc.url, leaseTtl: LEASE_TTL });
  backends.set(name, b);
  return b;
};
const node = (name: string) => backends.get(name)!;
const shardOfAgent = (agent: string) => shardOf('entity', `default/${agent}`, SHARD_COUNT);

async function owners(): Promise<Map<number, string>> {
  const kvs = await etcd.getAll().prefix(etcdKeys.shardsPrefix).strings();
  return new Map(Object.entries(kvs).map(([k, v]) => [shardOfOwnerKey(k)!, v]));
}

/** Waits until all 256 shards are owned, by the live members only, as each node's /health agrees. */
async function settled(members: string[]) {
  return waitFor(
    async () => {
      const table = await owners();
      if (table.size !== SHARD_COUNT) return undefined;
      if ([...table.values()].some((o) => !members.includes(o))) return undefined;
      for (const m of members) {
        const h = await node(m).health();
        if (h.status !== 200 || h.body.shards.owned !== [...table.values()].filter((o) => o === m).length)
          return undefined;
        if (ownerCountExpected(m, members) !== h.body.shards.owned) return undefined;
      }
      return table;
    },
    { timeoutMs: 40000, intervalMs: 250, what: `shards settled over ${members.join(',')}` },
  );
}
const ownerCountExpected = (m: string, members: string[]) =>
  Array.from({ length: SHARD_COUNT }, (_, s) => ownerOf(s, members)).filter((o) => o === m).length;

/** An agent name whose entity lives in a shard owned by `owner` among `members`. */
function agentNameOwnedBy(prefix: string, owner: string, members: string[]): string {
  for (let i = 0; i < 10_000; i++)
    if (ownerOf(shardOfAgent(`${prefix}-${i}`), members) === owner) return `${prefix}-${i}`;
  throw new Error('no name found');
}

async function keepaliveOf(b: Backend, agent: string) {
  const r = await b.get(`/api/core/v2/namespaces/default/events/${agent}/keepalive`);
  return r.status === 200 ? r.body : undefined;
}

const waitStatus = (b: Backend, agent: string, status: number, timeoutMs: number) =>
  waitFor(
    async () => {
      const e = await keepaliveOf(b, agent);
      return e?.check.status === status ? e : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `${agent} keepalive status ${status}` },
  );

const logTime = (l: Record<string, any>) => Date.parse(l.time);

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  etcd = new Etcd3({ hosts: etcdSvc.url });
  await Promise.all(['b1', 'b2', 'b3'].map(launch));
});

test.after(async () => {
  for (const a of agents) await a.kill().catch(() => {});
  for (const b of backends.values()) await b.kill().catch(() => {});
  etcd?.close();
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('every shard has exactly one owner, as placement says', async () => {
  const table = await settled(['b1', 'b2', 'b3']);
  for (let s = 0; s < SHARD_COUNT; s++) assert.is(table.get(s), ownerOf(s, ['b1', 'b2', 'b3']), `shard ${s}`);
  const h = await node('b1').health();
  assert.equal(h.body.members, ['b1', 'b2', 'b3']);
});

test('SIGKILL of the node owning a silent agent: the deadline fires on another node', async () => {
  const name = agentNameOwnedBy('kill-agent', 'b3', ['b1', 'b2', 'b3']);
  const agent = await startAgent({
    name,
    backendUrls: [node('b1').agentUrl],
    keepaliveInterval: 1,
    warning: 5,
  });
  agents.push(agent);
  await waitStatus(node('b1'), name, 0, 20000);
  await agent.kill();
  const silentSince = Date.now();
  await node('b3').kill('SIGKILL');
  backends.delete('b3');
  const ev = await waitStatus(node('b1'), name, 1, 30000);
  const after = (Date.now() - silentSince) / 1000;
  assert.ok(after >= 5 - 1.5, `the alert came ${after}s after the agent went silent`);
  assert.ok(['b1', 'b2'].includes(ev.check.processed_by), `processed by ${ev.check.processed_by}`);
  assert.match(ev.check.output, new RegExp(`^No keepalive sent from ${name} for \\d+ seconds \\(>= 5\\)$`));
  await settled(['b1', 'b2']);
});

test('a frozen node stops before its lease expires and applies nothing twice', async () => {
  await launch('b3');
  await settled(['b1', 'b2', 'b3']);
  const members = ['b1', 'b2', 'b3'];
  const name = agentNameOwnedBy('frozen-agent', 'b2', members);
  const agent = await startAgent({
    name,
    backendUrls: [node('b1').agentUrl],
    keepaliveInterval: 1,
    warning: 8,
  });
  agents.push(agent);
  await waitStatus(node('b1'), name, 0, 20000);

  const b2 = node('b2');
  const stoppedAt = Date.now();
  await b2.kill('SIGSTOP');
  // Well past the lease: the others take b2's shards and keep serving the agent.
  await waitFor(
    async () => {
      const table = await owners();
      return table.size === SHARD_COUNT && ![...table.values()].includes('b2') ? true : undefined;
    },
    { timeoutMs: 30000, intervalMs: 200, what: 'the shards of the frozen node to move' },
  );
  await sleep(3000);
  const during = await keepaliveOf(node('b1'), name);
  assert.is(during.check.status, 0, 'the agent stayed healthy through the takeover');
  assert.ok(!['b2'].includes(during.check.processed_by), `processed by ${during.check.processed_by}`);
  const continuedAt = Date.now();
  await b2.kill('SIGCONT');

  // It rejoins and gets its shards back.
  await settled(members);
  await sleep(2000);
  const after = await keepaliveOf(node('b1'), name);
  assert.is(after.check.status, 0);
  assert.ok(
    after.check.history.every((h: { status: number }) => h.status === 0),
    'never alerted',
  );

  // After SIGCONT and before re-acquiring shards, b2 must not have committed anything.
  const logs = b2.logs();
  const reactivated = logs
    .filter((l) => l.msg === 'shard activated' && logTime(l) >= continuedAt)
    .map(logTime);
  const firstReactivation = Math.min(...reactivated);
  assert.ok(Number.isFinite(firstReactivation), 'b2 re-acquired shards');
  const lost = logs.find(
    (l) => l.msg === 'cluster session lost; stopping all work and rejoining' && logTime(l) >= continuedAt,
  );
  assert.ok(lost, 'b2 noticed it had lost its session');
  const stale = logs.filter(
    (l) => l.msg === 'turn committed' && logTime(l) > stoppedAt && logTime(l) < firstReactivation,
  );
  assert.equal(stale, [], 'no turn committed by the frozen node before it re-acquired shards');

  // Across the cluster every message was applied at most once.
  const seen = new Map<string, string>();
  for (const b of backends.values()) {
    for (const l of b.logs()) {
      if (l.msg !== 'turn committed' || !l.msg_id) continue;
      assert.not.ok(seen.has(l.msg_id), `message ${l.msg_id} applied on ${seen.get(l.msg_id)} and ${b.name}`);
      seen.set(l.msg_id, b.name);
    }
  }
  assert.ok(seen.size >= 8, `saw ${seen.size} committed messages`);
  const notRecorded = node('b1')
    .logs()
    .filter((l) => l.msg === 'keepalive not recorded' && logTime(l) > stoppedAt);
  assert.equal(notRecorded, [], 'every keepalive of the takeover window was recorded');
  await agent.kill();
});

test('a fourth node joins: it takes shards and no deadline is lost or doubled', async () => {
  const before = ['b1', 'b2', 'b3'];
  const after = [...before, 'b4'];
  // Half of the agents live in shards that will move to b4.
  const names: string[] = [];
  for (let i = 0; names.length < 12 && i < 10_000; i++) {
    const n = `join-agent-${i}`;
    const moves = ownerOf(shardOfAgent(n), after) === 'b4';
    if (
      moves
        ? names.filter((x) => ownerOf(shardOfAgent(x), after) === 'b4').length < 6
        : names.length - names.filter((x) => ownerOf(shardOfAgent(x), after) === 'b4').length < 6
    )
      names.push(n);
  }
  const urls = before.map((b) => node(b).agentUrl);
  const started = await Promise.all(
    names.map((name) => startAgent({ name, backendUrls: urls, keepaliveInterval: 1, warning: 6 })),
  );
  agents.push(...started);
  for (const n of names) await waitStatus(node('b1'), n, 0, 30000);

  await Promise.all(started.map((a) => a.kill()));
  const silentSince = Date.now();
  await launch('b4');
  await settled(after);

  for (const n of names) {
    const ev = await waitStatus(node('b1'), n, 1, 30000);
    assert.ok((Date.now() - silentSince) / 1000 >= 6 - 1.5, `${n} alerted early`);
    assert.ok(ev.check.processed_by, 'stamped');
  }
  // A doubled deadline shows as two silence alerts closer together than the warning timeout.
  await sleep(1500);
  for (const n of names) {
    const ev = await keepaliveOf(node('b2'), n);
    const alerts = ev.check.history
      .filter((h: { status: number }) => h.status !== 0)
      .map((h: { executed: number }) => h.executed);
    for (let i = 1; i < alerts.length; i++)
      assert.ok(alerts[i] - alerts[i - 1] >= 5, `${n}: alerts at ${alerts}`);
  }
  const movedToB4 = names.filter((n) => ownerOf(shardOfAgent(n), after) === 'b4');
  assert.is(movedToB4.length, 6);
  const h4 = await node('b4').health();
  assert.is(h4.body.shards.owned, ownerCountExpected('b4', after));
});

test.run();
