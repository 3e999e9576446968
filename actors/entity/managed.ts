import type { Entity } from '../../proto/schemas/entity.ts';

/**
 * Once an operator has changed an agent's entity through the API, the backend owns the fields the
 * API manages (docs/compatibility.md#api-managed-entities): a keepalive the agent sent before it received the
 * new entity_config must not undo the change. The agent's own facts (system, version, last_seen) still come
 * from its keepalives.
 */
export function withStoredConfig(incoming: Entity, stored: Entity): Entity {
  return {
    ...incoming,
    metadata: {
      ...incoming.metadata,
      labels: stored.metadata.labels,
      annotations: stored.metadata.annotations,
    },
    subscriptions: stored.subscriptions,
    redact: stored.redact,
    deregister: stored.deregister,
    deregistration: stored.deregistration,
    keepalive_handlers: stored.keepalive_handlers,
  };
}
