/**
 * Bench-only actor host: one backend-like process running the real runtime (EtcdAdapter,
 * NatsAdapter, Membership, ShardManager, ActorHost) with a counter actor whose every message
 * changes its state, so every ask is a compare-and-set write to JetStream KV before the reply.
 *
 *   node --import tsx bench/ask-host.ts --etcd <url> --nats <url> [--name bench-host]
 *
 * Prints JSON lines on stdout: {"ready":true,...} once it owns every shard, then {"stats":...}
 * every second. Stops on SIGTERM/SIGINT (leaves the cluster, exits 0, so --cpu-prof is written).
 */
import { parseArgs } from 'node:util';
import { createLogger } from '../lib/log.ts';
import { SHARD_COUNT } from '../proto/names.ts';
import { EtcdAdapter } from '../actors/runtime/etcd.ts';
import type { KvStore } from '../actors/runtime/kv-store.ts';
import { NatsAdapter } from '../actors/runtime/nats.ts';
import { Membership } from '../actors/runtime/membership.ts';
import { ShardManager } from '../actors/runtime/shards.ts';
import { ActorHost } from '../actors/runtime/host.ts';
import { COUNTER_BUCKET, counterBehavior } from './lib/counter.ts';

const { values } = parseArgs({
  options: {
    etcd: { type: 'string' },
    nats: { type: 'string' },
    name: { type: 'string', default: 'bench-host' },
  },
});
if (!values.etcd || !values.nats) {
  process.stderr.write('usage: ask-host.ts --etcd <url> --nats <url>\n');
  process.exit(2);
}

const log = createLogger('warn', { component: 'bench-host' });
const etcd = new EtcdAdapter({ endpoints: [values.etcd] });
const nats = await NatsAdapter.connect({ servers: [values.nats], name: values.name! });
const stores = new Map<string, KvStore>([[COUNTER_BUCKET, await nats.kv(COUNTER_BUCKET)]]);
const membership = new Membership(etcd, {
  node: values.name!,
  ttlSeconds: 10,
  guardMarginMs: 1500,
  info: {},
  log,
});
const host = new ActorHost({
  nats,
  stores,
  behaviors: [counterBehavior],
  guard: () => membership.guardOk(),
  shardCount: SHARD_COUNT,
  log,
});
const shards = new ShardManager(etcd, membership, host, { shardCount: SHARD_COUNT, log });
await membership.join();
shards.start();

const t0 = Date.now();
while (host.ownedCount < SHARD_COUNT) {
  if (Date.now() - t0 > 60_000) {
    process.stderr.write(`owns only ${host.ownedCount} shards after 60 s\n`);
    process.exit(1);
  }
  await new Promise((r) => setTimeout(r, 50));
}
const out = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');
out({ ready: true, shards: host.ownedCount, ms: Date.now() - t0 });

// The writer is private to the host; its counters tell the group-commit batch size.
const writer = (host as unknown as { writer: { batches: number; writes: number } }).writer;
const stats = setInterval(
  () =>
    out({
      stats: {
        committed: host.committedTurns,
        actors: host.actorCount,
        batches: writer.batches,
        writes: writer.writes,
        mailbox: host.mailboxDepth(),
      },
    }),
  1000,
);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(stats);
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  await shards.stop().catch(() => {});
  await host.stop().catch(() => {});
  await membership.leave().catch(() => {});
  await nats.close().catch(() => {});
  await etcd.close().catch(() => {});
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
