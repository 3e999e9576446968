import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { SHARD_COUNT } from '../../../proto/names.ts';
import { VERSION } from '../../../proto/version.ts';
import type { Logger } from '../../../lib/log.ts';
import type { EtcdAdapter } from '../../../actors/runtime/etcd.ts';
import { Membership } from '../../../actors/runtime/membership.ts';
import { ShardManager } from '../../../actors/runtime/shards.ts';
import type { ActorHost } from '../../../actors/runtime/host.ts';
import { provider, type Provider } from '../service.ts';

const DEFAULTS = {
  // How long before etcd could expire the lease the node's own lease guard ends: 15 % of the TTL,
  // at most 1.5 s.
  guardMarginMsPerTtlSecond: 150,
  guardMarginMaxMs: 1500,
} as const;

/** Where a node keeps its lease id, so that its next run can revoke it instead of waiting for it to expire. */
const LEASE_FILE = 'member.lease';

/** The node's addresses, published in its member key. */
export interface NodeUrls {
  api: string;
  agent: string;
}

export function membershipService(
  cfg: BackendConfig,
  urls: NodeUrls,
  etcd: () => EtcdAdapter,
  log: Logger,
): Provider<Membership> {
  return provider(
    'membership',
    async () => {
      const leaseFile = join(cfg['state-dir'], LEASE_FILE);
      let previousLeaseId: string | undefined;
      try {
        previousLeaseId = readFileSync(leaseFile, 'utf8').trim() || undefined;
      } catch {
        /* first start */
      }
      const ttl = cfg['cluster-lease-ttl'];
      const membership = new Membership(etcd(), {
        node: cfg.name,
        ttlSeconds: ttl,
        guardMarginMs: Math.min(DEFAULTS.guardMarginMaxMs, ttl * DEFAULTS.guardMarginMsPerTtlSecond),
        info: { version: VERSION, api_url: urls.api, agent_url: urls.agent },
        previousLeaseId,
        onLease: (id) => {
          try {
            writeFileSync(leaseFile, id);
          } catch {
            /* best effort */
          }
        },
        log: log.child({ component: 'membership' }),
      });
      await membership.join();
      return membership;
    },
    (membership) => membership.leave(),
  );
}

export function shardsService(
  deps: { etcd: () => EtcdAdapter; membership: () => Membership; host: () => ActorHost },
  log: Logger,
): Provider<ShardManager> {
  return provider(
    'shards',
    async () => {
      const shards = new ShardManager(deps.etcd(), deps.membership(), deps.host(), {
        shardCount: SHARD_COUNT,
        log: log.child({ component: 'shards' }),
      });
      shards.start();
      return shards;
    },
    (shards) => shards.stop(),
  );
}
