import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';

// Messages of the entity actor: `entity/<namespace>/<name>`. Bodies were validated at the edge.

export const ENTITY_KIND = 'entity';
export const entityActorId = (namespace: string, name: string) => `${namespace}/${name}`;

/** Who sent the message: the agent session the gateway authenticated, or an API user. */
export interface Origin {
  namespace: string;
  name: string;
  user: string;
}

export interface KeepaliveMsg {
  origin: Origin;
  event: Event & { entity: Entity };
}

/**
 * An event for this entity. From an agent session (`source: 'agent'`) the entity is the agent; from
 * the API an unknown entity is created as a proxy (or with the class the event names).
 */
export interface EventMsg {
  origin: Origin;
  event: Event;
  source?: 'agent' | 'api';
  /** A legacy client's result about a proxy client (gateway/agents/event-route.ts): a legacy result. */
  legacy?: boolean;
}

/**
 * Removes a legacy client as the legacy API's DELETE does (its events resolved for their handlers
 * first), unless a keepalive arrived after `since_ms` (the cloudvm integration's removal).
 */
export interface LegacyRemoveMsg {
  reason: string;
  since_ms: number;
}

/** Create, replace or merge-patch the entity through the API. */
export interface PutEntityMsg {
  mode: 'create' | 'replace' | 'patch';
  entity?: Entity;
  patch?: Record<string, unknown>;
  user: string;
}

/**
 * Deleting an entity may leave a tombstone (the legacy API's invalidation): its keepalives and events
 * are refused for `invalidate_s` seconds.
 */
export interface DeleteEntityMsg {
  invalidate_s?: number;
}

export interface DeleteEventMsg {
  check: string;
}

/**
 * A retried message is answered what the runtime remembered of its first reply, and it does not
 * keep every reply (large ones, see actors/runtime/applied.ts): a reply with an entity may come
 * back as this.
 */
interface ReplyNotKept {
  duplicate: true;
}

/**
 * Every message of the entity actor, with its body and its reply: the actor's dispatch and its
 * senders (ref.ts) are typed by the same map, so neither side casts.
 */
export interface EntityProtocol {
  keepalive: { body: KeepaliveMsg; reply: { registered: boolean } };
  event: { body: EventMsg; reply: { stored: boolean } };
  'delete-event': { body: DeleteEventMsg; reply: { deleted: boolean } };
  'put-entity': { body: PutEntityMsg; reply: { created: boolean; entity: Entity } | ReplyNotKept };
  /** Deletes the entity and every event of it. */
  'delete-entity': { body: DeleteEntityMsg | null; reply: { deleted: boolean } };
  /** The stored entity, or null when there is none. */
  get: { body: null; reply: Entity | null };
  /** From an agent that said goodbye: deregisters it only when its entity asks for that. */
  deregister: { body: null; reply: { deregistered: boolean } };
  'legacy-remove': { body: LegacyRemoveMsg; reply: { removed: boolean } };
}

export type EntityMessage = keyof EntityProtocol;

/** What the entity actor keeps in its own record. */
export interface EntityState {
  entity: Entity;
  keepalive?: KeepaliveState;
  /** Names of the checks this entity has stored events for. */
  checks?: string[];
  /** Set once the API wrote the entity: from then on its managed fields win over keepalives. */
  api_managed?: boolean;
  /**
   * The digest (`sha256:<hex>`) of a legacy client's signature (docs/compatibility.md#signatures):
   * the first non-empty one its keepalives carried. Never in the entity nor in logs; forgotten with
   * the entity.
   */
  signature?: string;
}

export interface KeepaliveState {
  interval: number;
  warning: number;
  critical: number;
  /** Epoch ms of the last keepalive received (backend clock, immune to agent clock skew). */
  last_seen_ms: number;
  handlers: string[];
}
