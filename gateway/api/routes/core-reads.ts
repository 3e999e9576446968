import { Hono } from 'hono';
import type { EntityReads } from '../../../actors/entity/reads.ts';
import { ApiError } from '../errors.ts';

/** Read-only core/v2 routes over entities and events, served from KV by any node. */
export function coreReadRoutes(reads: EntityReads): Hono {
  const app = new Hono();
  app.get('/namespaces/:ns/entities', async (c) => c.json(await reads.listEntities(c.req.param('ns'))));
  app.get('/namespaces/:ns/entities/:name', async (c) => {
    const entity = await reads.entity(c.req.param('ns'), c.req.param('name'));
    if (!entity) throw new ApiError('not_found', 'resource not found');
    return c.json(entity);
  });
  app.get('/namespaces/:ns/events', async (c) => c.json(await reads.listEvents(c.req.param('ns'))));
  app.get('/namespaces/:ns/events/:entity', async (c) => c.json(await reads.listEvents(c.req.param('ns'), c.req.param('entity'))));
  app.get('/namespaces/:ns/events/:entity/:check', async (c) => {
    const event = await reads.event(c.req.param('ns'), c.req.param('entity'), c.req.param('check'));
    if (!event) throw new ApiError('not_found', 'resource not found');
    return c.json(event);
  });
  return app;
}
