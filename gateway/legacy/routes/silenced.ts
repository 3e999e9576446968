import * as v from 'valibot';
import type { Context } from 'hono';
import { configKeys } from '../../../proto/names.ts';
import { Silenced, silencedName } from '../../../proto/schemas/resources/silenced.ts';
import {
  ClearRules,
  SilenceRules,
  toLegacySilenced,
  type StoredSilenced,
} from '../../../proto/legacy/silenced.ts';
import { fromLegacySubscription } from '../../../proto/legacy/subscriptions.ts';
import { ApiError } from '../../api/errors.ts';
import { resourceWrite, silencedResource } from '../../api/resources.ts';
import type { LegacyEnv, LegacyServices } from '../env.ts';
import { LegacyError, empty, json, listed, readValid } from '../http.ts';
import { NAME, route, type LegacyRoute } from '../router.ts';

/** Who the stored entries name as their maker (`created_by`): the legacy API has no users. */
const LEGACY_SUBJECT = { username: 'legacy-api', groups: [] };

const nowSec = () => Date.now() / 1000;

/** The silenced entries of the namespace, ordered by id. */
const entries = (svc: LegacyServices) =>
  svc.config.list<StoredSilenced>(configKeys.prefix('silenced', svc.namespace));

const shown = (c: Context<LegacyEnv>, list: StoredSilenced[]) => {
  const now = nowSec();
  return json(
    c,
    200,
    listed(
      c,
      list.map((s) => toLegacySilenced(s, now)),
    ),
  );
};

/**
 * Writes an entry through the REST API's own path (resources.ts): the same stored form, expiry
 * default and cap, and lease, so an entry made here is the one the REST API lists. A refusal there
 * (an expire past the cap) is a bare 400 here.
 */
async function silence(svc: LegacyServices, rules: v.InferOutput<typeof SilenceRules>): Promise<void> {
  const parsed = v.safeParse(Silenced, {
    ...rules,
    subscription: rules.subscription === undefined ? undefined : fromLegacySubscription(rules.subscription),
    metadata: { namespace: svc.namespace },
  });
  if (!parsed.success) throw new LegacyError(400);
  try {
    const w = resourceWrite(
      silencedResource,
      parsed.output,
      { ns: svc.namespace, name: silencedName(parsed.output) },
      { subject: LEGACY_SUBJECT, now: Date.now(), silencedExpiry: svc.silencedExpiry },
      (key) => svc.config.get<{ metadata?: { created_by?: string } }>(key)?.metadata?.created_by,
    );
    await svc.config.put(w.key, w.stored, { leaseTtlSec: w.leaseTtlSec });
  } catch (err) {
    if (err instanceof ApiError && err.kind === 'invalid_argument') throw new LegacyError(400);
    throw err;
  }
}

/** The entry of an id: exactly that id, else (as the legacy API looked ids up) the last ending with it. */
function byId(svc: LegacyServices, legacyId: string): StoredSilenced | undefined {
  const id = fromLegacySubscription(legacyId);
  const all = entries(svc);
  return all.find((s) => s.metadata?.name === id) ?? all.findLast((s) => s.metadata?.name?.endsWith(id));
}

/** `/silenced`: the REST API's silenced entries of the namespace, the legacy way. */
export function silencedRoutes(svc: LegacyServices): LegacyRoute[] {
  return [
    route('GET', '/silenced', (c) => shown(c, entries(svc))),
    route('POST', '/silenced', async (c) => {
      await silence(svc, await readValid(c, SilenceRules));
      return empty(c, 201);
    }),
    route('GET', '/silenced/ids/([\\w.\\-*:]+)', (c, [id]) => {
      const entry = byId(svc, id!);
      if (!entry) throw new LegacyError(404);
      return json(c, 200, toLegacySilenced(entry, nowSec()));
    }),
    route('GET', '/silenced/subscriptions/([\\w.\\-:]+)', (c, [sub]) => {
      const want = fromLegacySubscription(sub!);
      return shown(
        c,
        entries(svc).filter((s) => s.subscription === want),
      );
    }),
    route('GET', `/silenced/checks/${NAME}`, (c, [check]) =>
      shown(
        c,
        entries(svc).filter((s) => s.check === check),
      ),
    ),
    route('POST', '/silenced/clear', async (c) => {
      const rules = await readValid(c, ClearRules);
      const id = fromLegacySubscription(rules.id ?? `${rules.subscription ?? '*'}:${rules.check ?? '*'}`);
      // An id holding a '/' would name another key: no entry has one.
      const deleted =
        !id.includes('/') && (await svc.config.remove(configKeys.namespaced('silenced', svc.namespace, id)));
      if (!deleted) throw new LegacyError(404);
      return empty(c, 204);
    }),
  ];
}
