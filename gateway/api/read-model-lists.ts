import type { Context, Hono } from 'hono';
import { SEP, type ReadItem } from '../../actors/entity/read-model.ts';
import { redactJsonText } from '../../lib/redact.ts';
import type { ApiEnv, ApiServices } from './env.ts';
import { listAcross, listIn, type Listing } from './list.ts';
import { ENTITY_FIELDS, EVENT_FIELDS } from './selector-fields.ts';
import { eventLabels, metadataLabels } from './selectors.ts';

// The entity and event lists: both come from the read model, per namespace and across namespaces.

type Kind = 'entity' | 'event';

/** Redacted text per read-model item: items are replaced on change, so one scan serves every list. */
const shown = { entity: new WeakMap<ReadItem, string>(), event: new WeakMap<ReadItem, string>() };
function shownJson(item: ReadItem, kind: Kind): string {
  let json = shown[kind].get(item);
  if (json === undefined) {
    json = redactJsonText(item.json, kind, () => item.value());
    shown[kind].set(item, json);
  }
  return json;
}

/** A page of read-model items as a JSON array, written from the stored JSON without re-encoding. */
function sendItems(c: Context, items: ReadItem[], kind: Kind): Response {
  return c.body(`[${items.map((i) => shownJson(i, kind)).join(',')}]`, 200, {
    'Content-Type': 'application/json',
  });
}

/** The namespace part of a read-model key. */
const nsOfKey = (key: string) => key.slice(0, key.indexOf(SEP));

/** Lists of read-model items, which are keyed, and namespaced, by their read-model key. */
const readModelListing = (
  resource: string,
  fields: Listing<ReadItem>['fields'],
  labelsOf: Listing<ReadItem>['labelsOf'],
): Listing<ReadItem> => ({
  resource,
  fields,
  labelsOf,
  keyOf: (i) => i.key,
  valueOf: (i) => i.value(),
  namespaceOf: (i) => nsOfKey(i.key),
});

const LISTS = {
  entity: { plural: 'entities', labels: metadataLabels, fields: ENTITY_FIELDS },
  event: { plural: 'events', labels: eventLabels, fields: EVENT_FIELDS },
} as const;

/**
 * Mounts `/namespaces/:ns/<plural>` and `/<plural>` for entities or events, and for events also
 * `/namespaces/:ns/events/:entity` (one entity's events).
 */
export function mountReadModelLists(app: Hono<ApiEnv>, svc: ApiServices, kind: Kind): void {
  const { plural, labels, fields } = LISTS[kind];
  const listing = readModelListing(plural, fields, labels);
  const items = kind === 'entity' ? svc.readModel.entities : svc.readModel.events;
  app.get(`/namespaces/:ns/${plural}`, (c) => {
    const ns = c.req.param('ns');
    return sendItems(
      c,
      listIn(c, svc, listing, ns, (after) => items.range(ns + SEP, after)),
      kind,
    );
  });
  app.get(`/${plural}`, (c) =>
    sendItems(
      c,
      listAcross(c, svc, listing, (after) => items.range('', after)),
      kind,
    ),
  );
  if (kind !== 'event') return;
  app.get('/namespaces/:ns/events/:entity', (c) => {
    const { ns, entity } = c.req.param();
    return sendItems(
      c,
      listIn(c, svc, listing, ns, (after) => items.range(ns + SEP + entity + SEP, after)),
      kind,
    );
  });
}
