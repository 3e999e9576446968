import type { Context } from 'hono';
import { LEGACY_NAME } from '../../../proto/legacy/clients.ts';
import { isLegacyEvent, toLegacyEvent } from '../../../proto/legacy/events.ts';
import type { Event } from '../../../proto/schemas/event.ts';
import type { LegacyEnv, LegacyServices } from '../env.ts';
import { redactClient, resolveEvent, storedEvents } from '../entities.ts';
import { LegacyError, issued, json, readObject } from '../http.ts';
import { ViewCache } from '../view-cache.ts';
import { NAME, route, type LegacyRoute } from '../router.ts';

/**
 * The stored event of (client, check) while the legacy API lists it (failing or flapping); a 404
 * otherwise, as its event registry held no other.
 */
async function listedEvent(svc: LegacyServices, client: string, check: string): Promise<Event> {
  if (!LEGACY_NAME.test(client) || !LEGACY_NAME.test(check)) throw new LegacyError(404);
  const event = await svc.reads.event(svc.namespace, client, check);
  if (!event || !isLegacyEvent(event)) throw new LegacyError(404);
  return event;
}

/** An event shown: its client redacted as `/clients` shows it, as the REST API redacts an event's entity. */
function shown(event: Event): Record<string, unknown> {
  const e = toLegacyEvent(event);
  return { ...e, client: redactClient(e.client as Record<string, unknown>) };
}

type Views = ViewCache<Event, Record<string, unknown>>;

const eventList = (c: Context<LegacyEnv>, svc: LegacyServices, views: Views, client?: string) =>
  views.list(c, storedEvents(svc, client).filter(isLegacyEvent));

const resolve = async (c: Context<LegacyEnv>, svc: LegacyServices, client: string, check: string) => {
  await resolveEvent(svc, client, await listedEvent(svc, client, check));
  return json(c, 202, issued());
};

/**
 * `/events` (and its alias `/incidents`), `/events/:client[/:check]`, `DELETE /events/:client/:check`
 * and `POST /resolve`: the legacy namespace's failing and flapping events the legacy way; a
 * resolution goes through the entity actor as a result (gateway/legacy/entities.ts).
 */
export function eventRoutes(svc: LegacyServices): LegacyRoute[] {
  const views: Views = new ViewCache(shown);
  return [
    route('GET', '/(?:events|incidents)', (c) => eventList(c, svc, views)),
    route('GET', `/events/${NAME}`, (c, [client]) => eventList(c, svc, views, client)),
    route('GET', `/events/${NAME}/${NAME}`, async (c, [client, check]) =>
      json(c, 200, shown(await listedEvent(svc, client!, check!))),
    ),
    route('DELETE', `/events/${NAME}/${NAME}`, (c, [client, check]) => resolve(c, svc, client!, check!)),
    route('POST', '/resolve', async (c) => {
      const body = await readObject(c);
      if (typeof body.client !== 'string' || typeof body.check !== 'string') throw new LegacyError(400);
      return resolve(c, svc, body.client, body.check);
    }),
  ];
}
