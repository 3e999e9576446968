import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { legacyRegistrationCheck } from './legacy-client.ts';

const REGISTRATION_CHECK = 'registration';

/**
 * The event of an agent's first keepalive (docs/compatibility.md#registration-and-deregistration): for the
 * handler named `registration`, never stored, only logged. Status 1 and interval 1 as the reference makes it.
 */
export function registrationEvent(entity: Entity, id: string, nowSec: number, node: string): Event {
  const ns = entity.metadata.namespace ?? 'default';
  return {
    timestamp: nowSec,
    id,
    entity,
    // A legacy client's is built from its `registration` scope (docs/compatibility.md#legacy-client).
    check: entity.legacy
      ? legacyRegistrationCheck(entity, ns, nowSec, node)
      : {
          metadata: { name: REGISTRATION_CHECK, namespace: ns },
          status: 1,
          output: `Entity ${entity.metadata.name ?? ''} registered`,
          handlers: [REGISTRATION_CHECK],
          interval: 1,
          executed: nowSec,
          issued: nowSec,
          scheduler: 'monitor',
          processed_by: node,
        },
    metadata: { namespace: ns },
  };
}
