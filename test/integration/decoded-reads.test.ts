// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startEtcd, startNats, waitFor } from '../harness/index.ts';
import { startRuntimeNode, stopRuntimeNode, type RuntimeNode } from '../harness/runtime-node.ts';
import { createLogger } from '../../lib/log.ts';
import type { KvStore } from '../../actors/runtime/kv-store.ts';
import { NatsAdapter } from '../../actors/runtime/nats.ts';
import { ActorClient } from '../../actors/runtime/ask.ts';
import { ActorError, type ActorBehavior } from '../../actors/runtime/types.ts';

// Owned state stays decoded (docs/architecture.md#owned-state-stays-decoded): a turn reads the object
// the actor's previous turn wrote, not a parse of its text; a record loaded from the store is parsed
// once; and with `freezeReads` (what every test backend runs with) a turn that changes what it read in
// place fails, leaving the store as it was.

const RECORDS = 'monitor_test_docs';
const SIDE = 'monitor_test_doc_pages';
const SHARDS = 8;

interface Page {
  n: number;
  tags: string[];
}
/** What each turn read last, by actor id: identity tells a cached object from a fresh parse. */
const lastRead = new Map<string, Page | undefined>();
const lastWritten = new Map<string, Page>();

const doc: ActorBehavior<{ pages: number }> = {
  kind: 'doc',
  bucket: RECORDS,
  keyTokens: (id) => [id],
  async receive(t, type) {
    const key = `${t.id}.page`;
    const page = await t.read<Page>(SIDE, key);
    lastRead.set(t.id, page);
    switch (type) {
      case 'bump': {
        const next: Page = { n: (page?.n ?? 0) + 1, tags: [...(page?.tags ?? []), `t${page?.n ?? 0}`] };
        t.writeJson(SIDE, key, JSON.stringify(next), next);
        lastWritten.set(t.id, next);
        return { n: next.n };
      }
      case 'text-only': {
        const next: Page = { n: (page?.n ?? 0) + 1, tags: page?.tags ?? [] };
        t.writeJson(SIDE, key, JSON.stringify(next));
        return { n: next.n };
      }
      case 'scribble': {
        // Wrong on purpose: changes the stored page in place, then writes it.
        page!.tags.push('scribbled');
        t.writeJson(SIDE, key, JSON.stringify(page), page);
        return { n: page!.n };
      }
      case 'get':
        return page ?? null;
      default:
        throw new ActorError('invalid', `no ${type}`);
    }
  },
  async fire() {},
};

const log = createLogger((process.env.MONITOR_TEST_LOG as 'debug' | undefined) ?? 'error');
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let client: NatsAdapter;
let actors: ActorClient;
let sideStore: KvStore;
let node: RuntimeNode | undefined;

async function startNode(freezeReads: boolean): Promise<void> {
  if (node) await stopRuntimeNode(node);
  const n = await startRuntimeNode({
    name: `node-${freezeReads ? 'frozen' : 'plain'}`,
    etcdUrl: etcdSvc.url,
    natsUrl: natsSvc.url,
    buckets: [RECORDS, SIDE],
    behaviors: [doc],
    shardCount: SHARDS,
    log,
    freezeReads,
  });
  node = n;
  await waitFor(async () => (n.host.ownedCount === SHARDS ? true : undefined), {
    timeoutMs: 20000,
    what: 'every shard owned',
  });
}

const stored = async (id: string) => {
  const e = await sideStore.getLatest(`${id}.page`);
  return e && !e.deleted ? (JSON.parse(Buffer.from(e.value).toString()) as Page) : undefined;
};

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  client = await NatsAdapter.connect({ servers: [natsSvc.url], name: 'test-client' });
  actors = new ActorClient(client, SHARDS);
  sideStore = await client.kv(SIDE);
});

test.after(async () => {
  if (node) await stopRuntimeNode(node).catch(() => {});
  await client?.close();
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('a turn reads the very object the previous turn wrote beside its text, not a parse of the text', async () => {
  await startNode(false);
  await actors.ask('doc', 'd1', 'bump', null);
  const written = lastWritten.get('d1');
  await actors.ask('doc', 'd1', 'bump', null);
  assert.ok(written !== undefined && lastRead.get('d1') === written, 'the cached object itself');
  assert.equal(await stored('d1'), { n: 2, tags: ['t0', 't1'] }, 'the store holds the text of each write');
});

test('a record loaded from the store, or written as text only, is parsed once for every later turn', async () => {
  await actors.ask('doc', 'd2', 'bump', null);
  await actors.ask('doc', 'd2', 'text-only', null);
  await actors.ask('doc', 'd2', 'get', null);
  const first = lastRead.get('d2');
  await actors.ask('doc', 'd2', 'get', null);
  assert.ok(first !== undefined && lastRead.get('d2') === first, 'one parse, shared by the turns after it');
  assert.equal(first, { n: 2, tags: ['t0'] });
  // A new node loads the record from the store: the same value, parsed from its text.
  await startNode(false);
  assert.equal(await actors.ask('doc', 'd2', 'get', null), { n: 2, tags: ['t0'] });
});

test('with frozen reads, a turn that changes a stored record in place fails and the store keeps the record', async () => {
  await startNode(true);
  await actors.ask('doc', 'd3', 'bump', null);
  await actors.ask('doc', 'd3', 'bump', null);
  const before = await stored('d3');
  const r = await actors.ask('doc', 'd3', 'scribble', null, { deadlineMs: 1500 }).then(
    () => undefined,
    (e: ActorError) => e,
  );
  assert.instance(r, ActorError, 'the turn failed');
  assert.equal(await stored('d3'), before, 'nothing written');
  assert.equal(await actors.ask('doc', 'd3', 'get', null), before, 'the actor still reads what is stored');
});

test('without frozen reads the same change in place goes unnoticed: the freeze is what catches it', async () => {
  await startNode(false);
  await actors.ask('doc', 'd4', 'bump', null);
  assert.equal(await actors.ask('doc', 'd4', 'scribble', null), { n: 1 });
  assert.equal((await stored('d4'))?.tags, ['t0', 'scribbled']);
});

test.run();
