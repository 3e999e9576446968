// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { startEtcd, startNats, waitFor } from '../harness/index.ts';
import { startRuntimeNode, stopRuntimeNode, type RuntimeNode } from '../harness/runtime-node.ts';
import { createLogger } from '../../lib/log.ts';
import type { KvStore } from '../../actors/runtime/kv-store.ts';
import { NatsAdapter } from '../../actors/runtime/nats.ts';
import { ActorClient } from '../../actors/runtime/ask.ts';
import { encodeActorRecord } from '../../actors/runtime/cell.ts';
import { actorRecordKey } from '../../proto/names.ts';
import { shardOf } from '../../actors/runtime/hash.ts';
import { ActorError, type ActorBehavior } from '../../actors/runtime/types.ts';

// Atomic turns (docs/architecture.md, "Atomic turns") against a real nats-server and etcd: a turn's
// writes fail part-way and the message is retried, and it must be applied exactly once.
//
// The failures are real JetStream failures, made by detaching a bucket's subjects from its stream
// (a stream config update): writes to that bucket get "no responders", exactly what a client sees
// while a bucket's stream has no leader after a nats-server died, while the other bucket keeps
// working. The bucket's data stays, and re-attaching the subjects brings it back as it was.

const RECORDS = 'monitor_test_ledgers';
const SIDE = 'monitor_test_lines';
const SHARDS = 16;

interface Ledger {
  lines: string[];
  fired?: number;
}
/** Each line is a side record holding how many times `add` was applied to it. */
const ledger: ActorBehavior<Ledger> = {
  kind: 'ledger',
  bucket: RECORDS,
  keyTokens: (id) => [id],
  async receive(t, type, body) {
    const b = body as { line: string; track?: boolean };
    switch (type) {
      case 'add': {
        const key = `${t.id}.${b.line}`;
        const n = ((await t.read<number>(SIDE, key)) ?? 0) + 1;
        t.write(SIDE, key, n);
        // Tracking a new line changes the record too: a turn of two writes.
        if (b.track && !(t.state?.lines ?? []).includes(b.line))
          t.state = { lines: [...(t.state?.lines ?? []), b.line] };
        return { n };
      }
      case 'drop': {
        const lines = t.state?.lines ?? [];
        for (const l of lines) t.remove(SIDE, `${t.id}.${l}`);
        t.state = undefined;
        return { dropped: lines.length };
      }
      case 'arm': {
        // A deadline and a side write in one turn.
        t.setTimer('alarm', t.now + (body as { ms: number }).ms);
        t.write(SIDE, `${t.id}.armed`, 1);
        t.state = { lines: t.state?.lines ?? [], fired: t.state?.fired ?? 0 };
        return { armed: true };
      }
      case 'get':
        return t.state ?? null;
      default:
        throw new ActorError('invalid', `no ${type}`);
    }
  },
  async fire(t) {
    t.state = { lines: t.state?.lines ?? [], fired: (t.state?.fired ?? 0) + 1 };
  },
};

const log = createLogger((process.env.MONITOR_TEST_LOG as 'debug' | undefined) ?? 'error');
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let nc: NatsConnection;
let jsm: JetStreamManager;
let client: NatsAdapter;
let actors: ActorClient;
let sideStore: KvStore;
let recordStore: KvStore;

type Node = RuntimeNode;
const nodes: Node[] = [];

async function startNode(name: string): Promise<Node> {
  const node = await startRuntimeNode({
    name,
    etcdUrl: etcdSvc.url,
    natsUrl: natsSvc.url,
    buckets: [RECORDS, SIDE],
    behaviors: [ledger],
    shardCount: SHARDS,
    log,
  });
  nodes.push(node);
  await waitFor(
    async () =>
      nodes.filter((n) => !n.stopped).reduce((s, n) => s + n.host.ownedCount, 0) === SHARDS
        ? true
        : undefined,
    { timeoutMs: 20000, what: 'every shard owned' },
  );
  return node;
}

const stopNode = stopRuntimeNode;

/** Detaches (or re-attaches) a KV bucket's subjects from its stream. */
async function setAttached(bucket: string, attached: boolean): Promise<void> {
  const info = await jsm.streams.info(`KV_${bucket}`);
  await jsm.streams.update(`KV_${bucket}`, {
    ...info.config,
    subjects: [attached ? `$KV.${bucket}.>` : `detached.${bucket}.>`],
  });
}

const line = async (id: string, l: string) => {
  const e = await sideStore.getLatest(`${id}.${l}`);
  return e && !e.deleted ? (JSON.parse(Buffer.from(e.value).toString()) as number) : undefined;
};

const askOnce = (id: string, type: string, body: unknown, msgId: string) =>
  actors.ask('ledger', id, type, body, { msgId, deadlineMs: 1500 }).then(
    (v) => ({ ok: true as const, v }),
    (e: ActorError) => ({ ok: false as const, e }),
  );

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  nc = await connect({ servers: natsSvc.url });
  jsm = await nc.jetstreamManager();
  client = await NatsAdapter.connect({ servers: [natsSvc.url], name: 'test-client' });
  actors = new ActorClient(client, SHARDS);
  sideStore = await client.kv(SIDE);
  recordStore = await client.kv(RECORDS);
  await startNode('node-a');
});

test.after(async () => {
  for (const n of nodes) await stopNode(n).catch(() => {});
  await client?.close();
  await nc?.close();
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('a turn whose side write fails after its record landed is applied exactly once on retry, and answered then', async () => {
  await setAttached(SIDE, false);
  const failed = await askOnce('l1', 'add', { line: 'x', track: true }, 'm-l1-1');
  assert.not.ok(failed.ok, 'no success is claimed while the side write cannot be made');
  assert.is((failed as { e: ActorError }).e.code, 'unavailable');
  await setAttached(SIDE, true);
  const retried = await actors.ask('ledger', 'l1', 'add', { line: 'x', track: true }, { msgId: 'm-l1-1' });
  assert.equal(retried, { n: 1 });
  assert.is(await line('l1', 'x'), 1, 'applied once: neither lost nor doubled');
  assert.equal(await actors.ask('ledger', 'l1', 'get', null), { lines: ['x'] });
});

test('a turn whose record write fails changes nothing; its retry is applied once', async () => {
  await setAttached(RECORDS, false);
  const failed = await askOnce('l2', 'add', { line: 'y', track: true }, 'm-l2-1');
  assert.not.ok(failed.ok);
  assert.is(await line('l2', 'y'), undefined, 'the side write waits for the record, which decides the turn');
  await setAttached(RECORDS, true);
  assert.equal(await actors.ask('ledger', 'l2', 'add', { line: 'y', track: true }, { msgId: 'm-l2-1' }), {
    n: 1,
  });
  assert.is(await line('l2', 'y'), 1);
});

test('a retry of a turn whose only write was a side record is recognised from that record after a reload', async () => {
  await actors.ask('ledger', 'l3', 'add', { line: 'z', track: true }, { msgId: 'm-l3-0' });
  const first = await actors.ask('ledger', 'l3', 'add', { line: 'z' }, { msgId: 'm-l3-1' });
  assert.equal(first, { n: 2 });
  // A new node takes the actor with a cold cache: only the side record knows m-l3-1 was applied.
  await startNode('node-b');
  await stopNode(nodes[0]!);
  await waitFor(async () => (nodes[1]!.host.ownedCount === SHARDS ? true : undefined), {
    timeoutMs: 20000,
    what: 'node-b to own every shard',
  });
  const again = await actors.ask('ledger', 'l3', 'add', { line: 'z' }, { msgId: 'm-l3-1' });
  assert.equal(again, first, 'answered what the first attempt was');
  assert.is(await line('l3', 'z'), 2, 'not applied twice');
  assert.equal(
    await actors.ask('ledger', 'l3', 'add', { line: 'z' }, { msgId: 'm-l3-2' }),
    { n: 3 },
    'a new message is applied',
  );
});

test('an intent left half done by a node that stopped is finished by the next owner before any message', async () => {
  await setAttached(SIDE, false);
  const failed = await askOnce('l4', 'add', { line: 'w', track: true }, 'm-l4-1');
  assert.not.ok(failed.ok);
  // The owner goes away while the side bucket is still unreachable; its intent is in the record.
  const owner = nodes.find((n) => !n.stopped)!;
  await startNode('node-c');
  await stopNode(owner);
  await setAttached(SIDE, true);
  await waitFor(
    async () =>
      nodes.filter((n) => !n.stopped).reduce((s, n) => s + n.host.ownedCount, 0) === SHARDS
        ? true
        : undefined,
    { timeoutMs: 20000, what: 'every shard owned again' },
  );
  // Another message about the same line sees the first one applied, then the retry is a duplicate.
  assert.equal(await actors.ask('ledger', 'l4', 'add', { line: 'w' }, { msgId: 'm-l4-2' }), { n: 2 });
  assert.equal(await actors.ask('ledger', 'l4', 'add', { line: 'w', track: true }, { msgId: 'm-l4-1' }), {
    n: 1,
  });
  assert.is(await line('l4', 'w'), 2);
});

test('a deadline of a turn decided while its side write failed fires once the store is back, with no message sent', async () => {
  await setAttached(SIDE, false);
  const failed = await askOnce('l7', 'arm', { ms: 3000 }, 'm-l7-1');
  assert.not.ok(failed.ok);
  await new Promise((r) => setTimeout(r, 1000));
  await setAttached(SIDE, true);
  // Nobody retries or asks (the record is read from KV directly): the owner finishes the turn by
  // itself and arms its deadline.
  const key = actorRecordKey(shardOf('ledger', 'l7', SHARDS), ['l7']);
  const st = await waitFor(
    async () => {
      const e = await recordStore.getLatest(key);
      const s = e ? (JSON.parse(Buffer.from(e.value).toString()) as { state?: Ledger }).state : undefined;
      return s && (s.fired ?? 0) > 0 ? s : undefined;
    },
    { timeoutMs: 15000, what: 'the deadline to fire' },
  );
  assert.is(st.fired, 1);
  assert.is(await line('l7', 'armed'), 1);
});

test('an ended actor keeps its record, so a retried end is answered as the first time', async () => {
  await actors.ask('ledger', 'l5', 'add', { line: 'a', track: true }, { msgId: 'm-l5-1' });
  await actors.ask('ledger', 'l5', 'add', { line: 'b', track: true }, { msgId: 'm-l5-2' });
  const first = await actors.ask('ledger', 'l5', 'drop', null, { msgId: 'm-l5-3' });
  assert.equal(first, { dropped: 2 });
  assert.is(await line('l5', 'a'), undefined);
  assert.is(await line('l5', 'b'), undefined);
  assert.equal(await actors.ask('ledger', 'l5', 'drop', null, { msgId: 'm-l5-3' }), first);
  assert.is(await actors.ask('ledger', 'l5', 'get', null), null);
});

test('an intent whose side record another writer changed is forgotten, so its message applies again', async () => {
  // Made by hand: a record whose intent replaces revision 1 of a line that is now at another
  // revision with no trace of the intent (a stale owner raced a new one). Nothing of that turn was
  // acknowledged; the runtime must not answer its retry as a duplicate.
  const id = 'l6';
  const sideKey = `${id}.q`;
  const r1 = await sideStore.put(sideKey, Buffer.from('5'), 0);
  await sideStore.put(sideKey, Buffer.from('6'), r1);
  const key = actorRecordKey(shardOf('ledger', id, SHARDS), [id]);
  await recordStore.put(
    key,
    encodeActorRecord(id, '{"lines":["q"]}', {}, [['m-l6-1', { n: 6 }]], {
      writes: [{ bucket: SIDE, key: sideKey, prev: r1, ids: ['m-l6-1'], json: '6' }],
    }),
    0,
  );
  assert.equal(await actors.ask('ledger', id, 'add', { line: 'q', track: true }, { msgId: 'm-l6-1' }), {
    n: 7,
  });
  assert.is(await line(id, 'q'), 7);
});

test.run();
