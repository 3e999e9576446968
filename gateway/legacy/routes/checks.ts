import { SEP } from '../../../actors/entity/read-model.ts';
import { entityRef } from '../../../actors/entity/ref.ts';
import { configKeys } from '../../../proto/names.ts';
import {
  RequestRules,
  requestSubscription,
  toLegacyCheck,
  type StoredCheck,
} from '../../../proto/legacy/checks.ts';
import type { LegacyServices } from '../env.ts';
import { LegacyError, issued, json, listed, readValid } from '../http.ts';
import { NAME, route, type LegacyRoute } from '../router.ts';

/** The check configurations of the legacy API's namespace, ordered by name. */
export const storedChecks = (svc: LegacyServices) =>
  svc.config.list<StoredCheck>(configKeys.prefix('checks', svc.namespace));

const storedCheck = (svc: LegacyServices, name: string) =>
  svc.config.get<StoredCheck>(configKeys.namespaced('checks', svc.namespace, name));

/**
 * Deletes the stored event of check `name` on every entity of the namespace, each through its
 * entity's actor (the event holds the check's latest result and history). After the answer, as the
 * legacy API did; a failure is logged, the others go on.
 */
async function deleteResults(svc: LegacyServices, name: string): Promise<void> {
  const prefix = svc.namespace + SEP;
  const entities: string[] = [];
  for (const item of svc.readModel.events.range(prefix)) {
    const [, entity, check] = item.key.split(SEP);
    if (check === name && entity !== undefined) entities.push(entity);
  }
  for (const entity of entities) {
    await entityRef(svc.actors, svc.namespace, entity)
      .ask('delete-event', { check: name })
      .catch((err: Error) =>
        svc.log.warn('legacy API: deleting a check result failed', {
          entity,
          check: name,
          error: err.message,
        }),
      );
  }
}

/**
 * `/checks` and `/request`: the check configurations of the namespace (all scheduled by the
 * backends, so none is the legacy generation's `standalone`), and ad hoc requests of them.
 */
export function checkRoutes(svc: LegacyServices): LegacyRoute[] {
  return [
    route('GET', '/checks', (c) => json(c, 200, listed(c, storedChecks(svc).map(toLegacyCheck)))),
    route('GET', `/checks/${NAME}`, (c, [name]) => {
      const check = storedCheck(svc, name!);
      if (!check) throw new LegacyError(404);
      return json(c, 200, toLegacyCheck(check));
    }),
    // Always accepted, defined or not: it deletes results, never the definition.
    route('DELETE', `/checks/${NAME}`, (c, [name]) => {
      void deleteResults(svc, name!);
      return json(c, 202, issued());
    }),
    route('POST', '/request', async (c) => {
      const req = await readValid(c, RequestRules);
      if (!storedCheck(svc, req.check)) throw new LegacyError(404);
      const accepted = issued();
      await svc.queueAdhoc({
        namespace: svc.namespace,
        check: req.check,
        subscriptions: [...new Set((req.subscribers ?? []).map(requestSubscription))],
        // The legacy API has no users: a request names its creator, or the API itself.
        creator: req.creator ?? 'legacy-api',
        reason: req.reason ?? '',
        issued: accepted.issued,
      });
      return json(c, 202, accepted);
    }),
  ];
}
