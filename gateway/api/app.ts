import { Hono } from 'hono';
import { API_PREFIXES, DASHBOARD_API_PREFIX } from '../../proto/api.ts';
import type { ApiEnv, ApiServices } from './env.ts';
import { ActorError } from '../../actors/runtime/types.ts';
import { ApiError, kindOfActorError, methodNotAllowed, sendApiError, sendError } from './errors.ts';
import { methodServed } from '../../lib/allow.ts';
import { routeMethods } from './methods.ts';
import { authenticate } from './middleware/authenticate.ts';
import { limitBody } from './middleware/body-limit.ts';
import { CONFIG_RESOURCES } from './resources.ts';
import { apiKeyRoutes } from './routes/apikeys.ts';
import { loadDashboardAssets, type DashboardAssets } from '../dashboard/assets.ts';
import { dashboardRoutes } from '../dashboard/routes.ts';
import { dashboardEventRoutes } from '../dashboard/events-api.ts';
import { authRoutes } from './routes/auth.ts';
import { authProviderRoutes, remove as removeAuthProvider } from './routes/authproviders.ts';
import { checkExtraRoutes } from './routes/check-extras.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { configResourceRoutes } from './routes/config-resources.ts';
import { entityRoutes } from './routes/entities.ts';
import { eventRoutes } from './routes/events.ts';
import { eventStreamRoutes } from './routes/event-stream.ts';
import { LEGACY_VIEWS_PREFIX, legacyViewRoutes } from './routes/legacy.ts';
import type { LegacyServices } from '../legacy/env.ts';
import { EventFeed } from './event-feed.ts';
import { namespaceRoutes } from './routes/namespaces.ts';
import { oidcRoutes } from './routes/oidc.ts';
import { silencedExtraRoutes } from './routes/silenced-extras.ts';
import { systemRoutes, type SystemDeps } from './routes/system.ts';
import { userRoutes } from './routes/users.ts';

/** Largest request body the API reads (the reference's `--api-request-limit`). */
const REQUEST_LIMIT_BYTES = 512_000;

type ApiDeps = ApiServices &
  SystemDeps & {
    /** The legacy API's services, for its views under `/api/legacy`; undefined when it is off. */
    legacy?: LegacyServices;
  };

// The dashboard's files are the same for every API a process builds: read once.
let dashboard: DashboardAssets | undefined;

/**
 * The REST API of a node: public system and auth routes, then `/api/core/v2` and the
 * authentication providers behind authentication and RBAC; one error format throughout.
 */
export function buildApi(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const limit = limitBody(REQUEST_LIMIT_BYTES);
  // The routes behind credentials: authentication first, then the body limit, so a caller without
  // credentials hears 401 whatever the size of its body (docs/compatibility.md#rest-edges).
  const guardedPrefixes: string[] = [];
  const guarded = (prefix: string) => {
    guardedPrefixes.push(prefix);
    const g = new Hono<ApiEnv>();
    g.use('*', authenticate(deps), limit);
    return g;
  };
  const isGuarded = (path: string) => guardedPrefixes.some((p) => path === p || path.startsWith(`${p}/`));
  app.use('*', deps.metrics.middleware());
  app.use('*', (c, next) => (isGuarded(c.req.path) ? next() : limit(c, next)));
  app.route('/', systemRoutes(deps));
  app.route('/', authRoutes(deps));
  // Public, and before the providers' routes below, whose authentication covers their whole prefix.
  app.route('/', oidcRoutes(deps));
  app.route('/', dashboardRoutes((dashboard ??= loadDashboardAssets())));

  const core = guarded(API_PREFIXES['core/v2']);
  core.route('/', namespaceRoutes(deps));
  core.route('/', userRoutes(deps));
  core.route('/', apiKeyRoutes(deps));
  core.route('/', clusterRoutes(deps));
  core.route('/', entityRoutes(deps));
  // Before the event routes: `/events/stream` would otherwise read as the events of entity "stream".
  const feed = new EventFeed(deps.readModel, deps.log.child({ component: 'event-stream' }));
  feed.register(deps.metrics.registry);
  core.route('/', eventStreamRoutes(deps, feed));
  core.route('/', eventRoutes(deps));
  core.route('/', checkExtraRoutes(deps));
  core.route('/', silencedExtraRoutes(deps));
  for (const def of CONFIG_RESOURCES) core.route('/', configResourceRoutes(deps, def));
  core.delete('/namespaces/:ns/authproviders/:name', (c) => removeAuthProvider(c, deps, c.req.param('name')));
  app.route(API_PREFIXES['core/v2'], core);

  // The legacy API's views for the dashboard, behind the same authentication and RBAC.
  const legacy = guarded(LEGACY_VIEWS_PREFIX);
  legacy.route('/', legacyViewRoutes(deps, deps.legacy));
  app.route(LEGACY_VIEWS_PREFIX, legacy);

  const providers = guarded(API_PREFIXES['authentication/v2']);
  providers.route('/', authProviderRoutes(deps));
  app.route(API_PREFIXES['authentication/v2'], providers);

  // The dashboard's own reads (docs/compatibility.md#dashboard-events-api), behind the same checks.
  const dash = guarded(DASHBOARD_API_PREFIX);
  dash.route('/', dashboardEventRoutes(deps));
  app.route(DASHBOARD_API_PREFIX, dash);

  // A path the table knows under other methods is a 405 naming them; one it does not know, a 404.
  // A request whose method a route serves gets here when that route passed it on (a missing file).
  const methodsAt = routeMethods(app);
  app.notFound((c) => {
    const methods = methodsAt(c.req.path);
    if (methods.length > 0 && !methodServed(c.req.method, methods))
      return sendApiError(c, methodNotAllowed(c.req.method, c.req.path, methods));
    return sendError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`);
  });
  app.onError((err, c) => {
    if (err instanceof ApiError) return sendApiError(c, err);
    if (err instanceof ActorError) return sendError(c, kindOfActorError(err), err.message);
    deps.log.error('API request failed', { method: c.req.method, path: c.req.path, error: err.message });
    return sendError(c, 'internal', 'internal error');
  });
  return app;
}
