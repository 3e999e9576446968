import type { Entity } from '../../proto/schemas/entity.ts';
import type { Check, Event } from '../../proto/schemas/event.ts';
import { legacyRedactFields } from '../../proto/legacy/redact.ts';
import { entityRef } from '../../actors/entity/ref.ts';
import { SEP } from '../../actors/entity/read-model.ts';
import { ENTITY_LIMIT_MESSAGE } from '../../actors/entity/limit.ts';
import { redactValue } from '../../lib/redact.ts';
import type { LegacyServices } from './env.ts';
import { LegacyError } from './http.ts';
import { LEGACY_API_USER } from '../../actors/entity/legacy-client.ts';

// What the legacy routes share: the namespace's entities and events from the read model (ordered,
// in memory), and the resolution of an event through its entity actor.

/**
 * Who the entity actor is told wrote through the legacy API (it has no users of its own); the actor
 * treats such results as legacy ones (docs/compatibility.md#legacy-client).
 */
export const LEGACY_USER = LEGACY_API_USER;

/** Every stored event of the legacy namespace, or of one of its entities, in name order. */
export function storedEvents(svc: LegacyServices, entity?: string): Event[] {
  const prefix = svc.namespace + SEP + (entity === undefined ? '' : entity + SEP);
  return [...svc.readModel.events.range(prefix)].map((i) => i.value<Event>());
}

/** Every entity of the legacy namespace, in name order. */
export function storedEntities(svc: LegacyServices): Entity[] {
  return [...svc.readModel.entities.range(svc.namespace + SEP)]
    .map((i) => i.value<Entity | null>())
    .filter((e): e is Entity => !!e);
}

/** A write that would create entity `name` past `--entity-limit`: 402, our addition, with `{"error"}`. */
export function refuseOverLimit(svc: LegacyServices, name: string): void {
  if (svc.entityLimit?.refuses(svc.namespace, name))
    throw new LegacyError(402, { error: ENTITY_LIMIT_MESSAGE });
}

/** A client shown: redacted with its own `redact` list, else the legacy default list. */
export function redactClient(client: Record<string, unknown>): Record<string, unknown> {
  return redactValue(client, legacyRedactFields(client));
}

const RESOLVE_OUTPUT = 'Resolving on request of the API';

/**
 * Resolves a stored event as the legacy API did: a result of its check (without its history) with
 * status 0, the API's output and `force_resolve`, executed now, through the entity actor, so it is
 * stored and handled as any resolution. Without `ttl`: a forced resolution disarms the check's TTL
 * switch until a fresh result arrives, as the legacy TTL monitor skipped it.
 */
export async function resolveEvent(svc: LegacyServices, entity: string, stored: Event): Promise<void> {
  const {
    history: _h,
    ttl: _ttl,
    processed_by: _p,
    duration: _d,
    ...check
  } = stored.check ?? { metadata: {} };
  const nowSec = Math.floor(Date.now() / 1000);
  const resolution: Check = {
    ...check,
    output: RESOLVE_OUTPUT,
    status: 0,
    issued: nowSec,
    executed: nowSec,
    force_resolve: true,
  };
  await entityRef(svc.actors, svc.namespace, entity).ask('event', {
    origin: { namespace: svc.namespace, name: entity, user: LEGACY_USER },
    event: { check: resolution },
    source: 'api',
  });
}
