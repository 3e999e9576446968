/**
 * One node of the actor runtime inside the test process (etcd membership, shard manager, actor host)
 * over a real etcd and nats-server: the runtime's integration suites run several of them side by side.
 */
import type { Logger } from '../../lib/log.ts';
import { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import type { KvStore } from '../../actors/runtime/kv-store.ts';
import { NatsAdapter } from '../../actors/runtime/nats.ts';
import { Membership } from '../../actors/runtime/membership.ts';
import { ShardManager } from '../../actors/runtime/shards.ts';
import { ActorHost } from '../../actors/runtime/host.ts';
import type { ActorBehavior } from '../../actors/runtime/types.ts';

interface RuntimeNodeOptions {
  name: string;
  etcdUrl: string;
  natsUrl: string;
  /** KV buckets the behaviors write (created when missing). */
  buckets: string[];
  behaviors: ActorBehavior<any>[];
  shardCount: number;
  log: Logger;
  /** Freeze what turns read of their side records (`--debug-freeze-reads`). */
  freezeReads?: boolean;
}

export interface RuntimeNode {
  name: string;
  etcd: EtcdAdapter;
  nats: NatsAdapter;
  membership: Membership;
  host: ActorHost;
  shards: ShardManager;
  stopped: boolean;
}

export async function startRuntimeNode(o: RuntimeNodeOptions): Promise<RuntimeNode> {
  const log = o.log.child({ node: o.name });
  const etcd = new EtcdAdapter({ endpoints: [o.etcdUrl] });
  const nats = await NatsAdapter.connect({ servers: [o.natsUrl], name: o.name });
  const stores = new Map<string, KvStore>();
  for (const b of o.buckets) stores.set(b, await nats.kv(b));
  const membership = new Membership(etcd, { node: o.name, ttlSeconds: 3, guardMarginMs: 500, info: {}, log });
  const host = new ActorHost({
    nats,
    stores,
    behaviors: o.behaviors,
    guard: () => membership.guardOk(),
    shardCount: o.shardCount,
    log,
    freezeReads: o.freezeReads,
  });
  const shards = new ShardManager(etcd, membership, host, { shardCount: o.shardCount, log });
  await membership.join();
  shards.start();
  return { name: o.name, etcd, nats, membership, host, shards, stopped: false };
}

/** Leaves the cluster in order (shards, host, membership, connections); a second call does nothing. */
export async function stopRuntimeNode(n: RuntimeNode): Promise<void> {
  if (n.stopped) return;
  n.stopped = true;
  await n.shards.stop();
  await n.host.stop();
  await n.membership.leave();
  await n.nats.close();
  await n.etcd.close();
}
