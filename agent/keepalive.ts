import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../proto/schemas/agent-config.ts';
import type { Entity } from '../proto/schemas/entity.ts';
import { KEEPALIVE_CHECK, type KeepaliveEvent } from '../proto/schemas/event.ts';

// A keepalive's check carries the agent's own timeouts (interval, warning as `timeout`, critical as
// `ttl`) because the backend judges silence with the agent's settings, not its own.

interface KeepaliveInput {
  config: AgentConfig;
  entity: Entity;
  /** 1 for the first keepalive of a connection; lets the backend spot gaps and restarts. */
  sequence: number;
  now?: Date;
}

export function buildKeepalive({
  config,
  entity,
  sequence,
  now = new Date(),
}: KeepaliveInput): KeepaliveEvent {
  const namespace = config.namespace;
  return {
    timestamp: Math.floor(now.getTime() / 1000),
    id: randomUUID(),
    sequence,
    entity,
    check: {
      metadata: { name: KEEPALIVE_CHECK, namespace },
      interval: config['keepalive-interval'],
      timeout: config['keepalive-warning-timeout'],
      ttl: config['keepalive-critical-timeout'],
      handlers: [...config['keepalive-handlers']],
    },
    metadata: { namespace },
  };
}
