import type { AgentConfig } from '../proto/schemas/agent-config.ts';
import type { Entity } from '../proto/schemas/entity.ts';
import { VERSION } from '../proto/version.ts';
import type { SystemInfo } from '../lib/system.ts';

// The agent's own entity (core/v2 shape). The agent is the source of truth for it: every keepalive
// carries it whole, so the backend can register an unknown agent from the first keepalive alone.

/** The subscription every agent has, so a check can be requested for one entity by name. */
const entitySubscription = (name: string): string => `entity:${name}`;

export function buildEntity(config: AgentConfig, system: SystemInfo, now: Date = new Date()): Entity {
  const name = config.name;
  const subscriptions = [...new Set([...config.subscriptions, entitySubscription(name)])];
  return {
    metadata: {
      name,
      namespace: config.namespace,
      labels: { ...config.labels },
      annotations: { ...config.annotations },
    },
    entity_class: 'agent',
    system,
    subscriptions,
    last_seen: Math.floor(now.getTime() / 1000),
    deregister: config.deregister,
    deregistration: config['deregistration-handler'] ? { handler: config['deregistration-handler'] } : {},
    user: config.user,
    redact: [...config.redact],
    monitor_agent_version: VERSION,
    keepalive_handlers: [...config['keepalive-handlers']],
  };
}
