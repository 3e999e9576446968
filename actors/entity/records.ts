import { randomUUID } from 'node:crypto';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Turn } from '../runtime/types.ts';
import { derivedEventId } from './keepalive.ts';
import type { EntityState, Origin } from './messages.ts';

// Small pieces of how the entity actor writes its records: event ids, the stored entity, its JSON.

export const sec = (ms: number) => Math.floor(ms / 1000);

/**
 * An event's id when its sender gave none: the same on every retry of the message that brought it
 * (the message id itself when it is a UUID, as the actor client makes them).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const newEventId = (t: Turn<unknown>) => {
  const m = t.messageId;
  if (m === undefined) return randomUUID();
  return UUID.test(m) ? m : derivedEventId(m, 'event');
};

/**
 * The entity as the backend stores it: identity from the actor's own id (never from a payload), its
 * own `entity:<name>` subscription, the class the caller decides.
 */
export function normalizedEntity(
  incoming: Entity,
  origin: Origin,
  entityClass: NonNullable<Entity['entity_class']>,
  previous?: Entity,
): Entity {
  const subs = new Set([...(incoming.subscriptions ?? []), `entity:${origin.name}`]);
  return {
    ...previous,
    ...incoming,
    metadata: { ...incoming.metadata, name: origin.name, namespace: origin.namespace },
    entity_class: entityClass,
    subscriptions: [...subs],
  };
}

/**
 * Entities are replaced, never changed in place, so each one's JSON is made once and spliced into
 * every event it appears in.
 */
const entityJson = new WeakMap<Entity, string>();
export function withEntity(eventJson: string, entity: Entity): string {
  let json = entityJson.get(entity);
  if (json === undefined) {
    json = JSON.stringify(entity);
    entityJson.set(entity, json);
  }
  return `${eventJson.slice(0, -1)},"entity":${json}}`;
}

export const withCheck = (st: EntityState, check: string): EntityState =>
  st.checks?.includes(check) ? st : { ...st, checks: [...(st.checks ?? []), check] };
