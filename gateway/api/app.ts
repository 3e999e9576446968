import { Hono } from 'hono';
import { API_PREFIXES, DASHBOARD_API_PREFIX } from '../../proto/api.ts';
import type { ApiEnv, ApiServices } from './env.ts';
import { ActorError } from '../../actors/runtime/types.ts';
import { ApiError, kindOfActorError, sendError } from './errors.ts';
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
  app.use('*', deps.metrics.middleware());
  app.use('*', limitBody(REQUEST_LIMIT_BYTES));
  app.route('/', systemRoutes(deps));
  app.route('/', authRoutes(deps));
  // Public, and before the providers' routes below, whose authentication covers their whole prefix.
  app.route('/', oidcRoutes(deps));
  app.route('/', dashboardRoutes((dashboard ??= loadDashboardAssets())));

  const core = new Hono<ApiEnv>();
  core.use('*', authenticate(deps));
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
  const legacy = new Hono<ApiEnv>();
  legacy.use('*', authenticate(deps));
  legacy.route('/', legacyViewRoutes(deps, deps.legacy));
  app.route(LEGACY_VIEWS_PREFIX, legacy);

  const providers = new Hono<ApiEnv>();
  providers.use('*', authenticate(deps));
  providers.route('/', authProviderRoutes(deps));
  app.route(API_PREFIXES['authentication/v2'], providers);

  // The dashboard's own reads (docs/compatibility.md#dashboard-events-api), behind the same checks.
  const dash = new Hono<ApiEnv>();
  dash.use('*', authenticate(deps));
  dash.route('/', dashboardEventRoutes(deps));
  app.route(DASHBOARD_API_PREFIX, dash);

  app.notFound((c) => sendError(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c) => {
    if (err instanceof ApiError) {
      for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
      return sendError(c, err.kind, err.message);
    }
    if (err instanceof ActorError) return sendError(c, kindOfActorError(err), err.message);
    deps.log.error('API request failed', { method: c.req.method, path: c.req.path, error: err.message });
    return sendError(c, 'internal', 'internal error');
  });
  return app;
}
