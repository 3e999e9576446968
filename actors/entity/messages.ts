import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';

// Messages of the entity actor: `entity/<namespace>/<name>`. Bodies were validated at the edge.

export const ENTITY_KIND = 'entity';
export const entityActorId = (namespace: string, name: string) => `${namespace}/${name}`;

/** Who sent the message: the agent session the gateway authenticated. */
export interface Origin { namespace: string; name: string; user: string }

export interface KeepaliveMsg { origin: Origin; event: Event & { entity: Entity } }
export interface EventMsg { origin: Origin; event: Event }

/** What the entity actor keeps in its own record. */
export interface EntityState {
  entity: Entity;
  keepalive?: KeepaliveState;
}

export interface KeepaliveState {
  interval: number;
  warning: number;
  critical: number;
  /** Epoch ms of the last keepalive received (backend clock, immune to agent clock skew). */
  last_seen_ms: number;
  handlers: string[];
}
