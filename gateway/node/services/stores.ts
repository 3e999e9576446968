import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { buckets, etcdKeys, SHARD_COUNT } from '../../../proto/names.ts';
import type { Logger } from '../../../lib/log.ts';
import { EtcdAdapter } from '../../../actors/runtime/etcd.ts';
import type { KvStore } from '../../../actors/runtime/kv-store.ts';
import { NatsAdapter } from '../../../actors/runtime/nats.ts';
import { ConfigStore } from '../../../actors/config/store.ts';
import { seedCluster } from '../../auth/seed.ts';
import { checkDatastore } from '../upgrade/datastore.ts';
import { provider, service, type Provider, type Service } from '../service.ts';
import { etcdFailure, natsFailure, type StoreAccess } from '../store-access.ts';

export function etcdService(endpoints: () => string[], access: StoreAccess['etcd']): Provider<EtcdAdapter> {
  return provider(
    'etcd',
    async () => {
      const etcd = new EtcdAdapter({ endpoints: endpoints(), auth: access.auth, tls: access.tls });
      // One read now, so that a refused certificate or password is reported as etcd's, naming the
      // flags to check, rather than as a gRPC status from whichever service reads first.
      try {
        await etcd.get(etcdKeys.clusterConfig);
      } catch (err) {
        await etcd.close();
        throw new Error(etcdFailure(err, endpoints()).message);
      }
      return etcd;
    },
    (etcd) => etcd.close(),
  );
}

/** Checks that the cluster was made with our shard count (it cannot change without a migration). */
async function ensureClusterConfig(etcd: EtcdAdapter): Promise<void> {
  const value = JSON.stringify({ shards: SHARD_COUNT });
  const res = await etcd.createIfAbsent(etcdKeys.clusterConfig, value);
  if (res.created || !res.existing) return;
  const shards = (JSON.parse(res.existing.value) as { shards?: number }).shards;
  if (shards !== SHARD_COUNT)
    throw new Error(`the cluster uses ${shards} shards and this backend ${SHARD_COUNT}; it cannot join`);
}

/**
 * The datastore's version checked (written by a new cluster's first node; a newer one refused:
 * docs/operations.md#upgrades), the cluster's shard count checked (or recorded by its first node)
 * and its built-in roles seeded.
 */
export function clusterService(etcd: () => EtcdAdapter, log: Logger): Service {
  return service('cluster config', async () => {
    await checkDatastore(etcd(), log);
    await ensureClusterConfig(etcd());
    await seedCluster(etcd(), log);
  });
}

export function natsService(
  cfg: BackendConfig,
  servers: () => string[],
  access: StoreAccess['nats'],
  log: Logger,
): Provider<NatsAdapter> {
  return provider(
    'nats',
    async () => {
      const nats = await NatsAdapter.connect({
        servers: servers(),
        name: `monitor-backend/${cfg.name}`,
        auth: access.auth,
        tls: access.tls,
      }).catch((err: unknown) => {
        throw new Error(natsFailure(err, servers()));
      });
      nats.watchStatus((s) =>
        s === 'disconnected'
          ? log.warn('NATS connection lost, reconnecting')
          : log.info('NATS connection restored'),
      );
      return nats;
    },
    (nats) => nats.close(),
  );
}

/**
 * The buckets of actor state; the other buckets are made by the services that use them, with their
 * TTL (a bucket made here first would have none).
 */
const ACTOR_BUCKETS = [buckets.entities, buckets.events, buckets.schedules, buckets.stashes];

/** The JetStream KV buckets of actor state, by bucket name; made on the cluster's first start. */
export function bucketsService(cfg: BackendConfig, nats: () => NatsAdapter): Provider<Map<string, KvStore>> {
  return provider('kv buckets', async () => {
    const stores = new Map<string, KvStore>();
    for (const b of ACTOR_BUCKETS) stores.set(b, await nats().kv(b, { replicas: cfg['nats-replicas'] }));
    return stores;
  });
}

export function configService(etcd: () => EtcdAdapter, log: Logger): Provider<ConfigStore> {
  return provider(
    'config store',
    async () => {
      const config = new ConfigStore(etcd(), log.child({ component: 'config' }));
      await config.start();
      return config;
    },
    (config) => config.stop(),
  );
}
