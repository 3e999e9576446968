// suite-timeout: 180
/**
 * Self-test of the cluster harness: a three-node NATS JetStream cluster and a three-member etcd
 * cluster on free loopback ports form, survive the SIGKILL of one node, and take it back.
 */
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { Etcd3 } from 'etcd3';
import { connect, type KV, type NatsConnection } from 'nats';
import {
  startEtcdCluster,
  startNatsCluster,
  waitFor,
  type EtcdCluster,
  type NatsCluster,
} from '../harness/index.ts';

const BUCKET = 'harness_selftest';
const STREAM = `KV_${BUCKET}`;

let nats: NatsCluster | undefined;
let etcd: EtcdCluster | undefined;
const conns: NatsConnection[] = [];
const etcdClients: Etcd3[] = [];

/** A client that fails over quickly, as the backend's does (docs/architecture.md#connections-to-etcd-and-nats). */
async function natsClient(servers: string[]): Promise<NatsConnection> {
  const nc = await connect({
    servers,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 2000,
    pingInterval: 2000,
  });
  conns.push(nc);
  return nc;
}

/** A client with a 2 s deadline per call, so a dead member costs one retry, not a hang. */
function etcdClient(hosts: string[]): Etcd3 {
  const c = new Etcd3({
    hosts,
    dialTimeout: 2000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 2000 }),
  });
  etcdClients.push(c);
  return c;
}

/**
 * The bucket through one client. A replicated stream's creation in a cluster that just formed can
 * outlast a JetStream API call's timeout on a busy machine: ask again (the creation is idempotent).
 */
async function kvOf(nc: NatsConnection): Promise<KV> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await nc.jetstream({ timeout: 10_000 }).views.kv(BUCKET, { replicas: 3 });
    } catch (err) {
      if (attempt >= 4) throw err;
    }
  }
}

test.before(async () => {
  [nats, etcd] = await Promise.all([startNatsCluster({ size: 3 }), startEtcdCluster({ size: 3 })]);
});

test.after(async () => {
  for (const nc of conns) await nc.close().catch(() => {});
  for (const c of etcdClients) c.close();
  await Promise.all([nats?.stopAll(), etcd?.stopAll()]);
});

// --- NATS ---------------------------------------------------------------------------------------

test('nats cluster: three nodes, one meta leader, a replicas-3 KV bucket written through every node is read through every other', async () => {
  assert.is(nats!.nodes.length, 3);
  assert.is(new Set(nats!.urls).size, 3, 'three distinct client URLs');
  const meta = await nats!.metaLeader();
  assert.ok(meta && nats!.node(meta), `meta leader ${meta} is one of ours`);
  // Created through the first node, then opened through each of the others.
  const kvs: KV[] = [];
  for (const u of nats!.urls) kvs.push(await kvOf(await natsClient([u])));
  for (const [i, kv] of kvs.entries()) await kv.put(`via-${i}`, `node ${i}`);
  for (const [i] of kvs.entries()) {
    const reader = kvs[(i + 1) % kvs.length]!;
    assert.is(
      (await reader.get(`via-${i}`))?.string(),
      `node ${i}`,
      `written through node ${i}, read through another`,
    );
  }
  const jsm = await conns[0]!.jetstreamManager();
  const info = await jsm.streams.info(STREAM);
  assert.is(info.config.num_replicas, 3);
  assert.is(info.cluster?.replicas?.length, 2, 'a leader and two replicas');
  assert.is(
    await nats!.streamLeader(STREAM),
    info.cluster?.leader,
    'streamLeader agrees with the stream info',
  );
});

let killedNats = '';

test('nats cluster: after SIGKILL of the stream leader, writes succeed again once the stream re-elects', async () => {
  const leader = await nats!.streamLeader(STREAM);
  assert.ok(leader, 'the stream has a leader');
  killedNats = leader!;
  const node = nats!.node(leader!)!;
  // Bound before the kill, as a long-lived client is: binding asks the stream leader for the stream's info.
  const kv = await kvOf(await natsClient(nats!.urls));
  await node.kill();
  assert.not.ok(node.running);
  let n = 0;
  await waitFor(
    async () => {
      await kv.put('after-kill', String(++n));
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: 'a write after the leader died' },
  );
  const fresh = await waitFor(
    async () => {
      const l = await nats!.streamLeader(STREAM);
      return l && l !== leader ? l : undefined;
    },
    { timeoutMs: 10_000, what: 'a new stream leader' },
  );
  assert.is.not(fresh, leader);
  assert.is((await kv.get('after-kill'))?.string(), String(n));
});

test('nats cluster: the killed node restarts on its ports and store, rejoins, and catches up on what was written without it', async () => {
  const node = nats!.node(killedNats)!;
  await node.restart();
  assert.ok(node.running);
  await nats!.waitHealthy();
  // Its replica is current again (it holds the write made while it was down).
  const jsm = await conns[0]!.jetstreamManager();
  await waitFor(
    async () => {
      const c = (await jsm.streams.info(STREAM)).cluster;
      if (c?.leader === killedNats) return true;
      return c?.replicas?.some((r) => r.name === killedNats && r.current) ? true : undefined;
    },
    { timeoutMs: 20_000, what: `${killedNats} to be a current replica of ${STREAM}` },
  );
  // And it serves clients: one connected to it alone writes and reads.
  const kv = await kvOf(await natsClient([node.url]));
  assert.ok(
    (await kv.get('after-kill'))?.string(),
    'the write made while it was down is readable through it',
  );
  await kv.put('after-restart', 'yes');
  assert.is((await kv.get('after-restart'))?.string(), 'yes');
});

// --- etcd ---------------------------------------------------------------------------------------

test('etcd cluster: three healthy members; a put through each member is read through every other', async () => {
  assert.is(etcd!.members.length, 3);
  for (const m of etcd!.members) assert.ok(await m.healthy(), `${m.name} healthy`);
  const clients = etcd!.urls.map((u) => etcdClient([u]));
  for (const [i, c] of clients.entries()) await c.put(`/harness/via-${i}`).value(`member ${i}`);
  for (const [i] of clients.entries()) {
    assert.is(await clients[(i + 1) % clients.length]!.get(`/harness/via-${i}`).string(), `member ${i}`);
  }
  const members = await clients[0]!.cluster.memberList({});
  assert.is(members.members.length, 3);
  assert.ok(await etcd!.leader(), 'a leader exists');
});

let killedEtcd = -1;

test('etcd cluster: after SIGKILL of the leader, puts through the remaining members succeed', async () => {
  const leader = await etcd!.leader();
  assert.ok(leader, 'a leader');
  killedEtcd = etcd!.members.indexOf(leader!);
  await leader!.kill();
  assert.not.ok(leader!.running);
  const rest = etcd!.members.filter((m) => m !== leader).map((m) => m.url);
  const c = etcdClient(rest);
  await waitFor(
    async () => {
      await c.put('/harness/after-kill').value('1');
      return true;
    },
    { timeoutMs: 15_000, intervalMs: 200, what: 'a put after the leader died' },
  );
  assert.is(await c.get('/harness/after-kill').string(), '1');
  const fresh = await etcd!.leader();
  assert.ok(fresh && fresh !== leader, `a new leader (${fresh?.name})`);
});

test('etcd cluster: the killed member restarts with its data dir, rejoins and serves what was written without it', async () => {
  const m = etcd!.members[killedEtcd]!;
  await m.restart();
  assert.ok(await m.healthy());
  await etcd!.waitHealthy();
  const c = etcdClient([m.url]);
  assert.is(
    await waitFor(() => c.get('/harness/after-kill').string(), {
      timeoutMs: 10_000,
      what: 'the key written while it was down',
    }),
    '1',
  );
  await c.put('/harness/after-restart').value('yes');
  assert.is(
    (await c.cluster.memberList({})).members.length,
    3,
    'still three members (it rejoined, it did not join anew)',
  );
});

test.run();
