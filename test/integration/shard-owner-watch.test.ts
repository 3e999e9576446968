// suite-timeout: 90
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startEtcd, waitFor } from '../harness/index.ts';
import { createLogger } from '../../lib/log.ts';
import { etcdKeys } from '../../proto/names.ts';
import { EtcdAdapter, type EtcdRecord, type SessionLease } from '../../actors/runtime/etcd.ts';
import { Membership } from '../../actors/runtime/membership.ts';
import { ShardManager, type ShardHost } from '../../actors/runtime/shards.ts';
import { shardsOf } from '../../actors/runtime/placement.ts';

// The shard manager against a real etcd when its owner watch lags behind its own transactions.
//
// Stand-in, and why: etcd delivers watch events in revision order but on a stream of its own, so on
// a loaded machine a node can get the answer of its create transaction before the watch has
// delivered older changes of the same key (a chaos run showed it: a restarted node lost a shard it
// had just taken and never took it again). That lag cannot be produced on demand, so the manager's
// adapter here holds watch events back until the test releases them; etcd itself is real.

type WatchHandlers = Parameters<EtcdAdapter['watchPrefix']>[1];
type WatchEvent = Parameters<WatchHandlers['onEvent']>[0];

/** An etcd adapter whose prefix watches can hold events back and replay their first snapshot. */
class LaggingEtcd extends EtcdAdapter {
  private held: Array<() => void> | undefined;
  private firstSnapshot: (() => void) | undefined;
  /** Watch events handed to the manager so far. */
  delivered = 0;

  override watchPrefix(prefix: string, handlers: WatchHandlers): ReturnType<EtcdAdapter['watchPrefix']> {
    return super.watchPrefix(prefix, {
      ...handlers,
      onSnapshot: (records: EtcdRecord[], revision: number) => {
        this.firstSnapshot ??= () => handlers.onSnapshot(records, revision);
        handlers.onSnapshot(records, revision);
      },
      onEvent: (ev: WatchEvent) => {
        const deliver = () => {
          this.delivered++;
          handlers.onEvent(ev);
        };
        if (this.held) this.held.push(deliver);
        else deliver();
      },
    });
  }

  /** From now on watch events wait in order until released. */
  hold(): void {
    this.held ??= [];
  }
  heldCount(): number {
    return this.held?.length ?? 0;
  }
  /** Delivers the oldest `n` held events (all when omitted); releasing all ends the holding. */
  release(n?: number): void {
    const queue = this.held ?? [];
    const batch = queue.splice(0, n ?? queue.length);
    if (n === undefined) this.held = undefined;
    for (const deliver of batch) deliver();
  }
  /** A resync whose list was answered before what the manager did since. */
  replayFirstSnapshot(): void {
    this.firstSnapshot?.();
  }
}

/** Records what the manager asks of the actor host. */
class RecordingHost implements ShardHost {
  readonly active = new Map<number, number>();
  drops = 0;
  verifyOwnership?: (shard: number) => Promise<boolean>;
  async activate(shard: number, fence: number): Promise<void> {
    this.active.set(shard, fence);
  }
  async deactivate(shard: number): Promise<void> {
    this.active.delete(shard);
  }
  drop(shard: number): void {
    this.drops++;
    this.active.delete(shard);
  }
}

const SHARDS = 8;
const log = createLogger((process.env.MONITOR_TEST_LOG as 'debug' | undefined) ?? 'error');
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
const closers: Array<() => Promise<unknown>> = [];

interface Node {
  lagging: LaggingEtcd;
  host: RecordingHost;
  shards: ShardManager;
  membership: Membership;
}

async function startNode(name: string): Promise<Node> {
  const plain = new EtcdAdapter({ endpoints: [etcdSvc.url] });
  const lagging = new LaggingEtcd({ endpoints: [etcdSvc.url] });
  const membership = new Membership(plain, {
    node: name,
    ttlSeconds: 10,
    guardMarginMs: 1000,
    info: {},
    log,
  });
  const host = new RecordingHost();
  const shards = new ShardManager(lagging, membership, host, { shardCount: SHARDS, log });
  await membership.join();
  shards.start();
  closers.push(async () => {
    await shards.stop();
    await membership.leave();
    await Promise.all([plain.close(), lagging.close()]);
  });
  await waitFor(async () => host.active.size === SHARDS, {
    timeoutMs: 10_000,
    what: `${name} to hold every shard`,
  });
  return { lagging, host, shards, membership };
}

test.before(async () => {
  etcdSvc = await startEtcd();
});

/** Each test's nodes leave before the next starts: they share the cluster's shard keys. */
async function closeAll(): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
}

test.after.each(closeAll);

test.after(async () => {
  await closeAll();
  await etcdSvc?.stop();
});

test('a node keeps a shard it took back when the watch reports older changes of its key afterwards', async () => {
  const prefix = 'lag-';
  const me = `${prefix}b`;
  const other = `${prefix}a`;
  const node = await startNode(me);
  const shard = [...shardsOf(other, [other, me], SHARDS)][0];
  assert.ok(shard !== undefined, 'the other member wins at least one shard');

  const peer = new EtcdAdapter({ endpoints: [etcdSvc.url] });
  closers.push(() => peer.close());
  const peerLease: SessionLease = await peer.grantLease(30);
  closers.push(() => peerLease.revoke());

  // Hold from a caught-up watch: the puts of the node's own first acquisitions are all delivered.
  await waitFor(async () => node.lagging.delivered >= SHARDS, {
    timeoutMs: 5000,
    what: 'the watch to deliver the first acquisitions',
  });
  node.lagging.hold();
  // Another member joins and wins the shard: the node hands it off (its delete is held back).
  await peer.createIfAbsent(etcdKeys.member(other), JSON.stringify({ name: other }), peerLease.id);
  await waitFor(async () => (await peer.get(etcdKeys.shardOwner(shard))) === undefined, {
    timeoutMs: 15_000,
    what: 'the node to hand the shard off',
  });
  // The other member takes it and, leaving again at once, releases it: both changes held back too.
  const taken = await peer.createIfAbsent(etcdKeys.shardOwner(shard), other, peerLease.id);
  assert.ok(taken.created);
  assert.ok(await peer.deleteIfCreatedAt(etcdKeys.shardOwner(shard), taken.revision));
  await peer.delete(etcdKeys.member(other));
  await waitFor(async () => !node.membership.memberNames().includes(other), {
    timeoutMs: 5000,
    what: 'the node to see the other member leave',
  });
  assert.ok(node.lagging.heldCount() >= 3, `held ${node.lagging.heldCount()} owner events`);

  // The watch catches up one event at a time, the node retaking the shard in between.
  node.lagging.release(1);
  await waitFor(async () => node.host.active.has(shard), {
    timeoutMs: 5000,
    what: 'the node to retake the shard',
  });
  node.lagging.release();

  await waitFor(async () => node.shards.coverage().missing === 0 && node.host.active.has(shard), {
    timeoutMs: 5000,
    what: 'the node to hold every shard after the watch caught up',
  });
  const key = await peer.get(etcdKeys.shardOwner(shard));
  assert.is(key?.value, me);
  assert.is(key?.createRevision, node.host.active.get(shard), 'the shard is served under its current key');
});

test('a resync list older than the node own acquisitions drops nothing', async () => {
  const node = await startNode('resync-a');
  const dropsBefore = node.host.drops;
  node.lagging.replayFirstSnapshot();
  await new Promise((r) => setTimeout(r, 500));
  assert.is(node.host.drops, dropsBefore, 'no shard dropped');
  assert.is(node.shards.coverage().missing, 0);
});

test.run();
