import { Hono, type Context } from 'hono';
import type { PutEntityMsg } from '../../../actors/entity/messages.ts';
import { entityRef } from '../../../actors/entity/ref.ts';
import { Entity } from '../../../proto/schemas/entity.ts';
import { Name } from '../../../proto/schemas/common.ts';
import { mergePatch } from '../../../proto/merge-patch.ts';
import { writeMessageId } from '../idempotency.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, checkPreconditions, readJson, sendOne, unwrap, validate } from '../http.ts';
import { placeInUrl } from '../resources.ts';
import { requireNamespace } from './config-resources.ts';
import { mountReadModelLists } from '../read-model-lists.ts';
import { redactEntity } from '../../../lib/redact.ts';
import { ENTITY_LIMIT_MESSAGE } from '../../../actors/entity/limit.ts';

/**
 * Entities: lists from the read model, single reads from KV, and every write through the entity's
 * actor, which is the one writer of an entity and its events.
 */
export function entityRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  mountReadModelLists(app, svc, 'entity');

  app.get('/namespaces/:ns/entities/:name', async (c) => {
    const { ns, name } = c.req.param();
    authorize(c, svc, { verb: 'get', resource: 'entities', namespace: ns, name });
    const entity = await svc.reads.entity(ns, name);
    if (!entity) throw new ApiError('not_found', 'resource not found');
    return sendOne(c, redactEntity(entity));
  });

  const write = async (c: Context<ApiEnv>, mode: 'create' | 'replace', urlName: string | undefined) => {
    const ns = c.req.param('ns')!;
    const body = placeInUrl(unwrap(await readJson(c), ['Entity']), urlName, ns);
    const name = urlName ?? (body.metadata?.name as string | undefined);
    if (!name) throw new ApiError('invalid_argument', 'invalid entity: metadata.name is required');
    validate(Name, name, 'entity name');
    authorize(c, svc, {
      verb: mode === 'create' ? 'create' : 'update',
      resource: 'entities',
      namespace: ns,
      name,
    });
    requireNamespace(svc, ns);
    const entity = validate(Entity, body, 'entity');
    if (svc.entityLimit?.refuses(ns, name)) throw new ApiError('payment_required', ENTITY_LIMIT_MESSAGE);
    const msg: PutEntityMsg = { mode, entity, user: c.get('subject').username };
    await entityRef(svc.actors, ns, name).ask('put-entity', msg, { msgId: await writeMessageId(c) });
    return c.body(null, 201);
  };
  app.post('/namespaces/:ns/entities', (c) => write(c, 'create', undefined));
  app.put('/namespaces/:ns/entities/:name', (c) => write(c, 'replace', c.req.param('name')));

  app.patch('/namespaces/:ns/entities/:name', async (c) => {
    const { ns, name } = c.req.param();
    authorize(c, svc, { verb: 'update', resource: 'entities', namespace: ns, name });
    const current = await svc.reads.entity(ns, name);
    if (!current) throw new ApiError('not_found', 'resource not found');
    checkPreconditions(c, redactEntity(current));
    const patch = unwrap(await readJson(c), ['Entity']);
    // Validate the result before asking the actor, so a bad patch is a 400 here.
    validate(Entity, placeInUrl(mergePatch(current, patch) as Record<string, unknown>, name, ns), 'entity');
    const msg: PutEntityMsg = { mode: 'patch', patch, user: c.get('subject').username };
    const res = await entityRef(svc.actors, ns, name).ask('put-entity', msg, {
      msgId: await writeMessageId(c),
    });
    // A retried request is answered from what the actor remembers, which may not hold the entity.
    const entity = 'entity' in res ? res.entity : await svc.reads.entity(ns, name);
    if (!entity) throw new ApiError('not_found', 'resource not found');
    return sendOne(c, redactEntity(entity));
  });

  app.delete('/namespaces/:ns/entities/:name', async (c) => {
    const { ns, name } = c.req.param();
    authorize(c, svc, { verb: 'delete', resource: 'entities', namespace: ns, name });
    const res = await entityRef(svc.actors, ns, name).ask('delete-entity', null, {
      msgId: await writeMessageId(c),
    });
    if (!res.deleted) throw new ApiError('not_found', 'resource not found');
    return c.body(null, 204);
  });

  return app;
}
