import { LEGACY_NAME } from '../../../proto/legacy/clients.ts';
import { toLegacyResult } from '../../../proto/legacy/events.ts';
import {
  legacyResultClient,
  legacyResultToCheck,
  validateLegacyResult,
} from '../../../proto/legacy/results.ts';
import { entityRef } from '../../../actors/entity/ref.ts';
import { ActorError } from '../../../actors/runtime/types.ts';
import type { LegacyServices } from '../env.ts';
import { LEGACY_USER, refuseOverLimit, storedEvents } from '../entities.ts';
import { LegacyError, empty, issued, json, readObject } from '../http.ts';
import { ViewCache } from '../view-cache.ts';
import { NAME, route, type LegacyRoute } from '../router.ts';

/** The client of a result that names none (the reference used its own `sensu-api`). */
const API_CLIENT = 'monitor-api';

/**
 * `/results`: every stored event of the legacy namespace as a legacy result (OK ones too, history as
 * integers); a result and an event are one record here, so `DELETE /results/:client/:check` deletes
 * the event. `POST /results` takes a result by the legacy rules (proto/legacy/results.ts).
 */
export function resultRoutes(svc: LegacyServices): LegacyRoute[] {
  const views = new ViewCache(toLegacyResult);
  return [
    route('GET', '/results', (c) => views.list(c, storedEvents(svc))),
    route('POST', '/results', async (c) => {
      const valid = validateLegacyResult(await readObject(c));
      if (!valid.ok) {
        svc.log.info('legacy result refused', { reason: valid.message });
        throw new LegacyError(400);
      }
      const client = legacyResultClient(valid.result, API_CLIENT);
      const nowSec = Math.floor(Date.now() / 1000);
      const check = legacyResultToCheck(valid.result, nowSec);
      // A source with tokens is for a legacy client to substitute; unsubstituted it names no entity.
      if (!check || !LEGACY_NAME.test(client)) throw new LegacyError(400);
      refuseOverLimit(svc, client);
      try {
        await entityRef(svc.actors, svc.namespace, client).ask('event', {
          origin: { namespace: svc.namespace, name: client, user: LEGACY_USER },
          event: { check, timestamp: nowSec },
          source: 'api',
        });
      } catch (err) {
        // An invalidated client's result is dropped (the actor logged it), as the reference's server did.
        if (!(err instanceof ActorError && err.code === 'invalid')) throw err;
      }
      return json(c, 202, issued());
    }),
    route('GET', `/results/${NAME}`, (c, [client]) => views.list(c, storedEvents(svc, client))),
    route('GET', `/results/${NAME}/${NAME}`, async (c, [client, check]) => {
      const event = await svc.reads.event(svc.namespace, client!, check!);
      if (!event) throw new LegacyError(404);
      return json(c, 200, toLegacyResult(event));
    }),
    route('DELETE', `/results/${NAME}/${NAME}`, async (c, [client, check]) => {
      const r = await entityRef(svc.actors, svc.namespace, client!).ask('delete-event', { check: check! });
      if (!r.deleted) throw new LegacyError(404);
      return empty(c, 204);
    }),
  ];
}
