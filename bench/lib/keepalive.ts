import { randomUUID } from 'node:crypto';
import type { KeepaliveMsg } from '../../actors/entity/messages.ts';

/** One keepalive event as agent/keepalive.ts builds it, for agent `name` in namespace default. */
export function keepaliveEvent(name: string, sequence: number): KeepaliveMsg['event'] {
  return {
    timestamp: Math.floor(Date.now() / 1000),
    id: randomUUID(),
    sequence,
    entity: { metadata: { name, namespace: 'default' }, entity_class: 'agent', subscriptions: ['linux'] },
    check: { metadata: { name: 'keepalive' }, interval: 20, timeout: 120, ttl: 0 },
  };
}
