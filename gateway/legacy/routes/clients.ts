import * as v from 'valibot';
import {
  LegacyClientDefinition,
  clientToEntity,
  toLegacyClient,
  withClientDefaults,
} from '../../../proto/legacy/clients.ts';
import { isLegacyEvent, toLegacyHistory } from '../../../proto/legacy/events.ts';
import { entityRef } from '../../../actors/entity/ref.ts';
import type { LegacyServices } from '../env.ts';
import {
  LEGACY_USER,
  redactClient,
  refuseOverLimit,
  resolveEvent,
  storedEntities,
  storedEvents,
} from '../entities.ts';
import { LegacyError, issued, json, listed, readObject } from '../http.ts';
import { NAME, route, type LegacyRoute } from '../router.ts';

const DEFAULTS = {
  /**
   * How long a client deleted with `invalidate=true` and no `invalidate_expire` refuses keepalives
   * and results: long enough for those already on their way (the reference's lasted its deletion).
   */
  invalidateSeconds: 30,
} as const;

const DIGITS = /^[0-9]+$/;

/**
 * Deletes a client as the reference did, after its 202: each failing or flapping event resolved
 * through the actor (its handlers see the resolution), then the entity and its events deleted,
 * leaving a tombstone when invalidated.
 */
async function deleteClient(svc: LegacyServices, name: string, invalidateS: number): Promise<void> {
  // Its checks from the actor's own record and each event from KV: what was just written is there.
  for (const check of (await svc.reads.state(svc.namespace, name))?.checks ?? []) {
    const event = await svc.reads.event(svc.namespace, name, check);
    if (event && isLegacyEvent(event)) await resolveEvent(svc, name, event);
  }
  await entityRef(svc.actors, svc.namespace, name).ask(
    'delete-entity',
    invalidateS > 0 ? { invalidate_s: invalidateS } : null,
  );
  svc.log.info('legacy client deleted', {
    namespace: svc.namespace,
    entity: name,
    invalidate_s: invalidateS,
  });
}

/** How long a deletion invalidates the client: 0 without `invalidate=true`. */
function invalidation(query: (k: string) => string | undefined): number {
  if (query('invalidate') !== 'true') return 0;
  const expire = query('invalidate_expire');
  return expire !== undefined && DIGITS.test(expire) && Number(expire) > 0
    ? Number(expire)
    : DEFAULTS.invalidateSeconds;
}

/**
 * `/clients`: the legacy namespace's entities as legacy clients (proto/legacy/clients.ts), each
 * redacted with its own `redact` list; `POST /clients` writes a client definition as an entity.
 */
export function clientRoutes(svc: LegacyServices): LegacyRoute[] {
  const client = async (name: string) => {
    const entity = await svc.reads.entity(svc.namespace, name);
    if (!entity) throw new LegacyError(404);
    return entity;
  };
  return [
    route('GET', '/clients', (c) =>
      json(
        c,
        200,
        listed(
          c,
          storedEntities(svc).map((e) => redactClient(toLegacyClient(e))),
        ),
      ),
    ),
    route('POST', '/clients', async (c) => {
      const nowSec = Math.floor(Date.now() / 1000);
      const r = v.safeParse(LegacyClientDefinition, withClientDefaults(await readObject(c), nowSec));
      if (!r.success) throw new LegacyError(400);
      const name = r.output.name as string;
      refuseOverLimit(svc, name);
      const existing = await svc.reads.entity(svc.namespace, name);
      await entityRef(svc.actors, svc.namespace, name).ask('put-entity', {
        mode: 'replace',
        entity: clientToEntity(r.output, nowSec, existing),
        user: LEGACY_USER,
      });
      return json(c, 201, { name });
    }),
    route('GET', `/clients/${NAME}`, async (c, [name]) =>
      json(c, 200, redactClient(toLegacyClient(await client(name!)))),
    ),
    route('DELETE', `/clients/${NAME}`, async (c, [name]) => {
      await client(name!);
      const invalidateS = invalidation((k) => c.req.query(k));
      void deleteClient(svc, name!, invalidateS).catch((err: Error) =>
        svc.log.error('legacy client deletion failed', {
          namespace: svc.namespace,
          entity: name,
          error: err.message,
        }),
      );
      return json(c, 202, issued());
    }),
    route('GET', `/clients/${NAME}/history`, (c, [name]) =>
      json(c, 200, storedEvents(svc, name).map(toLegacyHistory)),
    ),
  ];
}
