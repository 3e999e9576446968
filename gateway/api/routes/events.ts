import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { DeleteEventMsg, EventMsg } from '../../../actors/entity/messages.ts';
import { entityRef } from '../../../actors/entity/ref.ts';
import { Event } from '../../../proto/schemas/event.ts';
import { Name } from '../../../proto/schemas/common.ts';
import { writeMessageId } from '../idempotency.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, readJson, sendOne, unwrap, validate } from '../http.ts';
import { requireNamespace } from './config-resources.ts';
import { mountReadModelLists } from '../read-model-lists.ts';
import { redactEventEntity } from '../../../lib/redact.ts';
import { ENTITY_LIMIT_MESSAGE } from '../../../actors/entity/limit.ts';

type Named = { metadata?: { name?: unknown; namespace?: unknown } } | undefined;

/** A URL name wins only when the body agrees or is silent. */
function nameFrom(part: Named, urlName: string | undefined, what: string): string | undefined {
  const bodyName = typeof part?.metadata?.name === 'string' ? part.metadata.name : undefined;
  if (urlName !== undefined && bodyName !== undefined && bodyName !== urlName)
    throw new ApiError(
      'invalid_argument',
      `the ${what} name in the body ("${bodyName}") differs from the URL ("${urlName}")`,
    );
  return urlName ?? bodyName;
}

/**
 * Events: lists from the read model, single reads from KV, writes through the entity's actor; a 201
 * means the event is durable.
 */
export function eventRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  mountReadModelLists(app, svc, 'event');

  app.get('/namespaces/:ns/events/:entity/:check', async (c) => {
    const { ns, entity, check } = c.req.param();
    authorize(c, svc, { verb: 'get', resource: 'events', namespace: ns, name: check });
    const event = await svc.reads.event(ns, entity, check);
    if (!event) throw new ApiError('not_found', 'resource not found');
    return sendOne(c, redactEventEntity(event));
  });

  const write = async (c: Context<ApiEnv>, urlEntity?: string, urlCheck?: string) => {
    const ns = c.req.param('ns')!;
    const raw = unwrap(await readJson(c), ['Event']) as { entity?: Named; check?: Named; metrics?: unknown };
    const entity = nameFrom(raw.entity, urlEntity, 'entity');
    const check = nameFrom(raw.check, urlCheck, 'check');
    if (!entity) throw new ApiError('invalid_argument', 'invalid event: entity.metadata.name is required');
    if (!check && !raw.metrics)
      throw new ApiError('invalid_argument', 'invalid event: check.metadata.name is required');
    validate(Name, entity, 'entity name');
    if (check) validate(Name, check, 'check name');
    authorize(c, svc, {
      verb: c.req.method === 'POST' ? 'create' : 'update',
      resource: 'events',
      namespace: ns,
      name: check,
    });
    requireNamespace(svc, ns);
    const withNames = {
      ...raw,
      entity: {
        ...(raw.entity ?? {}),
        metadata: { ...(raw.entity?.metadata ?? {}), name: entity, namespace: ns },
      },
      ...(check
        ? {
            check: {
              ...(raw.check ?? {}),
              metadata: { ...(raw.check?.metadata ?? {}), name: check, namespace: ns },
            },
          }
        : {}),
    };
    const event = validate(Event, withNames, 'event');
    // Metrics-only events are not stored: answered once their pipeline job is durable.
    if (!check) {
      await svc.pipeline?.submitMetrics(ns, event, event.id ?? randomUUID());
      return c.body(null, 201);
    }
    // An event about an unknown entity creates it (a proxy), so it counts against the limit.
    if (svc.entityLimit?.refuses(ns, entity)) throw new ApiError('payment_required', ENTITY_LIMIT_MESSAGE);
    const msg: EventMsg = {
      origin: { namespace: ns, name: entity, user: c.get('subject').username },
      event,
      source: 'api',
    };
    await entityRef(svc.actors, ns, entity).ask('event', msg, { msgId: await writeMessageId(c) });
    return c.body(null, 201);
  };
  app.post('/namespaces/:ns/events', (c) => write(c));
  app.post('/namespaces/:ns/events/:entity/:check', (c) =>
    write(c, c.req.param('entity'), c.req.param('check')),
  );
  app.put('/namespaces/:ns/events/:entity/:check', (c) =>
    write(c, c.req.param('entity'), c.req.param('check')),
  );

  app.delete('/namespaces/:ns/events/:entity/:check', async (c) => {
    const { ns, entity, check } = c.req.param();
    authorize(c, svc, { verb: 'delete', resource: 'events', namespace: ns, name: check });
    const msg: DeleteEventMsg = { check };
    const res = await entityRef(svc.actors, ns, entity).ask('delete-event', msg, {
      msgId: await writeMessageId(c),
    });
    if (!res.deleted) throw new ApiError('not_found', 'resource not found');
    return c.body(null, 204);
  });

  return app;
}
