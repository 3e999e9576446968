import type { ActorClient, AskOptions } from '../runtime/ask.ts';
import { ENTITY_KIND, entityActorId, type EntityMessage, type EntityProtocol } from './messages.ts';

/** The entity actor of one entity, as its senders see it: each message with its own body and reply. */
export interface EntityRef {
  ask<T extends EntityMessage>(
    type: T,
    body: EntityProtocol[T]['body'],
    opts?: AskOptions,
  ): Promise<EntityProtocol[T]['reply']>;
}

/** The entity actor of `namespace/name`; refusals arrive as the runtime's ActorError. */
export function entityRef(actors: ActorClient, namespace: string, name: string): EntityRef {
  const id = entityActorId(namespace, name);
  return {
    ask<T extends EntityMessage>(type: T, body: EntityProtocol[T]['body'], opts?: AskOptions) {
      return actors.ask<EntityProtocol[T]['reply']>(ENTITY_KIND, id, type, body, opts);
    },
  };
}
