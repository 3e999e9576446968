import { Hono } from 'hono';
import type { EntityReads } from '../../actors/entity/reads.ts';
import type { Logger } from '../../proto/log.ts';
import { ApiError, sendError } from './errors.ts';
import { coreReadRoutes } from './routes/core-reads.ts';
import { systemRoutes, type HealthReport, type VersionReport } from './routes/system.ts';

export interface ApiDeps {
  reads: EntityReads;
  health: () => Promise<HealthReport>;
  version: () => Promise<VersionReport>;
  log: Logger;
}

/** The REST API of a node: small route groups mounted on one Hono app, one error format. */
export function buildApi(deps: ApiDeps): Hono {
  const app = new Hono();
  app.route('/', systemRoutes(deps));
  app.route('/api/core/v2', coreReadRoutes(deps.reads));
  app.notFound((c) => sendError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c) => {
    if (err instanceof ApiError) return sendError(c, err.kind, err.message);
    deps.log.error('API request failed', { method: c.req.method, path: c.req.path, error: err.message });
    return sendError(c, 'internal', 'internal error');
  });
  return app;
}
