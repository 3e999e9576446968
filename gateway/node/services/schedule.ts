import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { encodeToken, streams, subjects } from '../../../proto/names.ts';
import type { Logger } from '../../../lib/log.ts';
import type { NatsAdapter } from '../../../actors/runtime/nats.ts';
import type { ActorClient } from '../../../actors/runtime/ask.ts';
import type { ConfigStore } from '../../../actors/config/store.ts';
import type { EntityReadModel } from '../../../actors/entity/read-model.ts';
import { ScheduleReconciler } from '../../../actors/schedule/reconciler.ts';
import { startAdhocExecutor } from '../../../actors/schedule/adhoc.ts';
import { provider, service, type Provider, type Service } from '../service.ts';

/** Keeps one schedule actor per check in step with the configuration. */
export function scheduleService(
  deps: { config: () => ConfigStore; actors: () => ActorClient },
  log: Logger,
): Service {
  let reconciler: ScheduleReconciler | undefined;
  return service(
    'schedule',
    async () => {
      reconciler = new ScheduleReconciler(deps.config(), deps.actors(), log.child({ component: 'schedule' }));
      reconciler.start();
    },
    async () => reconciler?.stop(),
  );
}

/** Queues an ad hoc check request of the API for whichever node takes it. */
export type QueueAdhoc = (request: Record<string, unknown>) => Promise<void>;

/** The ad hoc request queue and this node's executor of it. */
export function adhocService(
  cfg: BackendConfig,
  deps: { nats: () => NatsAdapter; config: () => ConfigStore; readModel: () => EntityReadModel },
  log: Logger,
): Provider<{ queue: QueueAdhoc; stop(): Promise<void> }> {
  return provider(
    'adhoc',
    async () => {
      const nats = deps.nats();
      const publish = await nats.workQueue(streams.adhoc, subjects.adhocPrefix, {
        replicas: cfg['nats-replicas'],
      });
      const executor = await startAdhocExecutor(
        nats,
        deps.config(),
        log.child({ component: 'adhoc' }),
        deps.readModel(),
      );
      const queue: QueueAdhoc = (req) =>
        publish(encodeToken(String(req.namespace)), Buffer.from(JSON.stringify(req)));
      return { queue, stop: () => executor.stop() };
    },
    (adhoc) => adhoc.stop(),
  );
}
