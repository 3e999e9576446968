import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { SHARD_COUNT, subjects } from '../../../proto/names.ts';
import { encodeFrame, ENTITY_DELETED_CLOSE, SESSION_END_HEADER } from '../../../proto/frames.ts';
import type { Logger } from '../../../lib/log.ts';
import type { KvStore } from '../../../actors/runtime/kv-store.ts';
import type { NatsAdapter } from '../../../actors/runtime/nats.ts';
import type { Membership } from '../../../actors/runtime/membership.ts';
import { ActorHost } from '../../../actors/runtime/host.ts';
import type { ConfigStore } from '../../../actors/config/store.ts';
import type { SilencedIndex } from '../../../actors/config/silenced-index.ts';
import { entityBehavior, type EntityStats } from '../../../actors/entity/actor.ts';
import { cloudvmCheck } from '../../../actors/entity/cloudvm.ts';
import { entityRef } from '../../../actors/entity/ref.ts';
import type { ActorClient } from '../../../actors/runtime/ask.ts';
import type { EntityReadModel } from '../../../actors/entity/read-model.ts';
import { silencedBy, toDeleteOnResolve } from '../../../actors/entity/silencing.ts';
import type { pipelineInterest } from '../../../actors/pipeline/workflows.ts';
import { scheduleBehavior } from '../../../actors/schedule/actor.ts';
import { stashBehavior } from '../../../actors/stash/actor.ts';
import { provider, type Provider } from '../service.ts';

interface ActorHostDeps {
  nats: () => NatsAdapter;
  stores: () => Map<string, KvStore>;
  membership: () => Membership;
  config: () => ConfigStore;
  silenced: () => SilencedIndex;
  readModel: () => EntityReadModel;
  interest: () => ReturnType<typeof pipelineInterest>;
  entityStats: EntityStats;
  /** The node's actor client (made after the host: asked only once both exist). */
  actors: () => ActorClient;
}

/**
 * The host of this node's entity, schedule and stash actors. It has nothing to start (the shards activate
 * it); it is a service of its own so that it stops after the shards are handed off and before the
 * node leaves the cluster.
 */
export function actorHostService(cfg: BackendConfig, deps: ActorHostDeps, log: Logger): Provider<ActorHost> {
  return provider(
    'actor host',
    async () => {
      const nats = deps.nats();
      const membership = deps.membership();
      const config = deps.config();
      const silenced = deps.silenced();
      return new ActorHost({
        nats,
        stores: deps.stores(),
        shardCount: SHARD_COUNT,
        guard: () => membership.guardOk(),
        publishDurable: (subject, data, msgId) => nats.publishDurable(subject, data, msgId),
        freezeReads: cfg['debug-freeze-reads'],
        behaviors: [
          entityBehavior({
            node: cfg.name,
            stats: deps.entityStats,
            deregistrationHandler: cfg['deregistration-handler'],
            interest: deps.interest(),
            silence: (ns, event, entity, nowSec) => {
              const entries = silenced.forNamespace(ns);
              if (entries.length === 0) return { names: [], onResolve: [] };
              const names = silencedBy(entries, event, entity, nowSec);
              return { names, onResolve: names.length ? toDeleteOnResolve(entries, names) : [] };
            },
            unsilence: async (ns, names) => {
              for (const name of names) {
                await silenced.remove(ns, name).catch((err) =>
                  log.warn('expire_on_resolve: silenced entry not removed', {
                    namespace: ns,
                    silenced: name,
                    error: (err as Error).message,
                  }),
                );
              }
            },
            pushConfig: (ns, name, entity) =>
              nats.publish(subjects.agent(ns, name), encodeFrame('entity_config', JSON.stringify(entity))),
            endSession: (ns, name) =>
              nats.publish(subjects.agent(ns, name), new Uint8Array(0), {
                [SESSION_END_HEADER]: ENTITY_DELETED_CLOSE.reason,
              }),
            cloudvm: cfg['legacy-cloudvm-url']
              ? cloudvmCheck({
                  url: cfg['legacy-cloudvm-url'],
                  log: log.child({ component: 'cloudvm' }),
                  remove: (ns, name, reason, since) =>
                    entityRef(deps.actors(), ns, name).ask('legacy-remove', { reason, since_ms: since }),
                })
              : undefined,
          }),
          scheduleBehavior({
            config,
            readModel: deps.readModel(),
            publish: (subject, data) => nats.publish(subject, data),
          }),
          stashBehavior(),
        ],
        log: log.child({ component: 'actors' }),
      });
    },
    (host) => host.stop(),
  );
}
