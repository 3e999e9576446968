// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startEtcd, startNats, waitFor } from '../harness/index.ts';
import { startRuntimeNode, stopRuntimeNode, type RuntimeNode } from '../harness/runtime-node.ts';
import { createLogger } from '../../lib/log.ts';
import { etcdKeys, shardOfOwnerKey } from '../../proto/names.ts';
import { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import { NatsAdapter } from '../../actors/runtime/nats.ts';
import { ActorClient } from '../../actors/runtime/ask.ts';
import { ActorError, type ActorBehavior } from '../../actors/runtime/types.ts';

// The runtime with two nodes in one process over a real etcd and a real nats-server, driving a
// small counter actor: placement, fenced ownership, dedupe, durable state, timers and handoff.

const BUCKET = 'monitor_test_counters';
interface Counter {
  n: number;
  fired: number[];
}

const counter: ActorBehavior<Counter> = {
  kind: 'counter',
  bucket: BUCKET,
  keyTokens: (id) => [id],
  async receive(t, type, body) {
    const st = t.state ?? { n: 0, fired: [] };
    switch (type) {
      case 'inc':
        t.state = { ...st, n: st.n + 1 };
        return st.n + 1;
      case 'get':
        return t.state ?? null;
      case 'arm':
        t.state = st;
        t.setTimer('alarm', t.now + (body as { ms: number }).ms);
        return true;
      case 'refuse':
        t.state = { ...st, n: -1000 };
        throw new ActorError('invalid', 'refused on purpose');
      default:
        throw new ActorError('invalid', `no ${type}`);
    }
  },
  async fire(t, _name, at) {
    const st = t.state ?? { n: 0, fired: [] };
    t.state = { ...st, fired: [...st.fired, at] };
  },
};

/** A second kind whose bucket a taking node reads after the counter's (see the last test). */
const OTHER_BUCKET = 'monitor_test_other';
const other: ActorBehavior<{ x: number }> = {
  kind: 'other',
  bucket: OTHER_BUCKET,
  keyTokens: (id) => [id],
  async receive() {
    return null;
  },
  async fire() {},
};

const log = createLogger((process.env.MONITOR_TEST_LOG as 'debug' | undefined) ?? 'error');
const SHARDS = 256;
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;

type Node = RuntimeNode;
const nodes: Node[] = [];
let client: NatsAdapter;
let actors: ActorClient;

async function startNode(name: string): Promise<Node> {
  const node = await startRuntimeNode({
    name,
    etcdUrl: etcdSvc.url,
    natsUrl: natsSvc.url,
    buckets: [BUCKET, OTHER_BUCKET],
    behaviors: [counter, other],
    shardCount: SHARDS,
    log,
  });
  nodes.push(node);
  return node;
}

const stopNode = stopRuntimeNode;

async function ownerTable(etcd: EtcdAdapter): Promise<Map<number, string>> {
  const { records } = await etcd.list(etcdKeys.shardsPrefix);
  return new Map(records.map((r) => [shardOfOwnerKey(r.key)!, r.value]));
}

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  client = await NatsAdapter.connect({ servers: [natsSvc.url], name: 'test-client' });
  actors = new ActorClient(client, SHARDS);
});

test.after(async () => {
  for (const n of nodes) await stopNode(n).catch(() => {});
  await client?.close();
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('one node takes every shard and serves asks with durable state', async () => {
  const a = await startNode('node-a');
  await waitFor(async () => a.host.ownedCount === SHARDS, {
    timeoutMs: 15000,
    what: 'node-a to own all shards',
  });
  const owners = await ownerTable(a.etcd);
  assert.is(owners.size, SHARDS);
  for (const o of owners.values()) assert.is(o, 'node-a');
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => actors.ask('counter', `c${i % 10}`, 'inc', null)),
  );
  assert.equal(results.filter((r) => r === 5).length, 10);
  assert.equal(await actors.ask('counter', 'c3', 'get', null), { n: 5, fired: [] });
});

test('a retried message id is applied once', async () => {
  const first = await actors.ask('counter', 'dedupe', 'inc', null, { msgId: 'fixed-id-1' });
  const again = await actors.ask('counter', 'dedupe', 'inc', null, { msgId: 'fixed-id-1' });
  assert.is(first, 1);
  assert.is(again, 1, 'a retry is answered what the first attempt was');
  assert.equal(await actors.ask('counter', 'dedupe', 'get', null), { n: 1, fired: [] });
});

test('a refused message changes nothing', async () => {
  const err = await actors.ask('counter', 'c1', 'refuse', null).then(
    () => undefined,
    (e: ActorError) => e,
  );
  assert.ok(err instanceof ActorError);
  assert.is(err!.code, 'invalid');
  assert.equal(await actors.ask('counter', 'c1', 'get', null), { n: 5, fired: [] });
});

test('messages queued together share a turn and a write; a refused one among them fails alone', async () => {
  const host = nodes[0]!.host as unknown as { writer: { writes: number } };
  const writesBefore = host.writer.writes;
  const asks = Array.from({ length: 40 }, () => actors.ask('counter', 'burst', 'inc', null));
  const refused = actors.ask('counter', 'burst', 'refuse', null).then(
    () => undefined,
    (e: ActorError) => e,
  );
  const more = Array.from({ length: 10 }, () => actors.ask('counter', 'burst', 'inc', null));
  const results = (await Promise.all([...asks, ...more])) as number[];
  assert.equal(
    [...results].sort((x, y) => x - y),
    Array.from({ length: 50 }, (_, i) => i + 1),
  );
  const err = await refused;
  assert.ok(err instanceof ActorError && err.code === 'invalid');
  assert.equal(await actors.ask('counter', 'burst', 'get', null), { n: 50, fired: [] });
  const writes = host.writer.writes - writesBefore;
  assert.ok(writes < 50, `${writes} writes for 50 increments`);
});

test('a second node takes about half of the shards; each shard has one owner', async () => {
  const b = await startNode('node-b');
  const a = nodes[0]!;
  await waitFor(
    async () =>
      a.host.ownedCount + b.host.ownedCount === SHARDS && b.host.ownedCount > 80 ? true : undefined,
    { timeoutMs: 20000, what: 'shards to split' },
  );
  const owners = await ownerTable(a.etcd);
  assert.is(owners.size, SHARDS);
  const counts = { 'node-a': 0, 'node-b': 0 } as Record<string, number>;
  for (const o of owners.values()) counts[o]!++;
  assert.is(counts['node-a'], a.host.ownedCount);
  assert.is(counts['node-b'], b.host.ownedCount);
  // State written by node-a is read by whichever node owns the actor now.
  for (let i = 0; i < 10; i++)
    assert.is(await actors.ask('counter', `c${i}`, 'get', null).then((s) => (s as Counter).n), 5);
});

test('a deadline set on a node that leaves fires on the new owner, once', async () => {
  const [a, b] = nodes as [Node, Node];
  // Find an actor that node-a owns now.
  const owners = await ownerTable(a.etcd);
  const { shardOf } = await import('../../actors/runtime/hash.ts');
  let id = '';
  for (let i = 0; i < 1000 && !id; i++)
    if (owners.get(shardOf('counter', `t${i}`, SHARDS)) === 'node-a') id = `t${i}`;
  assert.ok(id, 'an actor owned by node-a');
  await actors.ask('counter', id, 'arm', { ms: 2500 });
  await stopNode(a);
  await waitFor(async () => b.host.ownedCount === SHARDS, {
    timeoutMs: 20000,
    what: 'node-b to take every shard',
  });
  const state = await waitFor(
    async () => {
      const s = (await actors.ask('counter', id, 'get', null)) as Counter;
      return s.fired.length > 0 ? s : undefined;
    },
    { timeoutMs: 15000, what: 'the deadline to fire on node-b' },
  );
  await new Promise((r) => setTimeout(r, 1000));
  const after = (await actors.ask('counter', id, 'get', null)) as Counter;
  assert.is(after.fired.length, 1, 'fired exactly once');
  assert.ok(state.fired[0]! > 0);
});

test('asks wait out a handoff instead of failing', async () => {
  const c = await startNode('node-c');
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => actors.ask('counter', `h${i % 20}`, 'inc', null)),
  );
  assert.is(results.length, 200);
  await waitFor(async () => (c.host.ownedCount > 80 ? true : undefined), {
    timeoutMs: 20000,
    what: 'node-c to take shards',
  });
  let total = 0;
  for (let i = 0; i < 20; i++) total += ((await actors.ask('counter', `h${i}`, 'get', null)) as Counter).n;
  assert.is(total, 200);
});

test('fencing: an owner key is released only by the incarnation that created it', async () => {
  const etcd = new EtcdAdapter({ endpoints: [etcdSvc.url] });
  try {
    const key = '/monitor-test/fence/owner';
    const first = await etcd.createIfAbsent(key, 'node-x');
    assert.ok(first.created);
    const fence1 = first.created ? first.revision : 0;
    const second = await etcd.createIfAbsent(key, 'node-y');
    assert.not.ok(second.created, 'a held shard cannot be taken');
    if (!second.created) assert.is(second.existing?.value, 'node-x');
    assert.not.ok(await etcd.deleteIfCreatedAt(key, fence1 - 1), 'a wrong fence releases nothing');
    assert.ok(await etcd.deleteIfCreatedAt(key, fence1));
    const again = await etcd.createIfAbsent(key, 'node-y');
    assert.ok(again.created);
    assert.ok(again.created && again.revision > fence1, 'fences only grow');
    assert.not.ok(
      await etcd.deleteIfCreatedAt(key, fence1),
      'the old incarnation cannot release the new one',
    );
  } finally {
    await etcd.close();
  }
});

test('fencing: a compare-and-set write with a stale revision fails', async () => {
  const kv = await client.kv(BUCKET);
  const rev = await kv.put('fence-test', Buffer.from('a'), 0);
  await kv.put('fence-test', Buffer.from('b'), rev);
  const stale = await kv.put('fence-test', Buffer.from('c'), rev).then(
    () => 'written',
    (e: Error) => e.name,
  );
  assert.is(stale, 'CasConflictError');
  const recreate = await kv.put('fence-test', Buffer.from('d'), 0).then(
    () => 'written',
    (e: Error) => e.name,
  );
  assert.is(recreate, 'CasConflictError');
});

test("a write behind the owner's back is detected, the actor reloaded, the retry applied once", async () => {
  const { shardOf } = await import('../../actors/runtime/hash.ts');
  const { actorRecordKey } = await import('../../proto/names.ts');
  await actors.ask('counter', 'behind', 'inc', null);
  await actors.ask('counter', 'behind', 'arm', { ms: 60_000 });
  // Someone else (think: a frozen former owner waking up) writes the record.
  const kv = await client.kv(BUCKET);
  const key = actorRecordKey(shardOf('counter', 'behind', SHARDS), ['behind']);
  const cur = (await kv.get(key))!;
  const record = JSON.parse(Buffer.from(cur.value).toString());
  record.state.n = 100;
  record.timers.alarm.at = Date.now() + 1500;
  await kv.put(key, Buffer.from(JSON.stringify(record)), cur.revision);
  // The owner's cached view is stale: its write loses, it reloads, the caller's retry succeeds.
  const n = await actors.ask('counter', 'behind', 'inc', null, { msgId: 'behind-1' });
  assert.is(n, 101);
  // The deadline moved by the other writer was re-armed from the stored record, not lost.
  const fired = await waitFor(
    async () => {
      const s = (await actors.ask('counter', 'behind', 'get', null)) as Counter;
      return s.fired.length ? s : undefined;
    },
    { timeoutMs: 10000, what: 'the re-armed deadline' },
  );
  assert.is(fired.fired.length, 1);
});

test('a deadline already due when a node takes its shard fires, also with another kind read after it', async () => {
  const id = 'due-at-takeover';
  await actors.ask('counter', id, 'arm', { ms: 300 });
  // Nobody owns the shard while the deadline passes; the next owner finds it due.
  for (const n of nodes.splice(0)) await stopNode(n).catch(() => {});
  await new Promise((r) => setTimeout(r, 1000));
  const d = await startNode('node-d');
  await waitFor(async () => d.host.ownedCount === SHARDS, {
    timeoutMs: 20000,
    what: 'node-d to own every shard',
  });
  const state = await waitFor(
    async () => {
      const s = (await actors.ask('counter', id, 'get', null)) as Counter;
      return s.fired.length ? s : undefined;
    },
    { timeoutMs: 10000, what: 'the due deadline to fire on node-d' },
  );
  assert.is(state.fired.length, 1);
});

test.run();
