import { Hono } from 'hono';
import { methodServed } from '../../../lib/allow.ts';
import type { Access } from '../../auth/rbac.ts';
import { buildLegacyView } from '../../legacy/app.ts';
import type { LegacyServices } from '../../legacy/env.ts';
import { NAME } from '../../legacy/router.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError, methodNotAllowed } from '../errors.ts';
import { authorize } from '../http.ts';

// The legacy views on the API port (docs/compatibility.md#the-legacy-views-on-the-api-port): the
// dashboard lives on the API port with `connect-src 'self'` and Bearer tokens, so the legacy API's
// route table is mounted here, in process, behind the REST API's authentication and an RBAC check
// that maps each legacy route to core/v2 verbs and resources. Only the routes of this table are
// served; every other legacy route stays on the legacy port alone.

/** One legacy route served here and what RBAC must allow for it. */
interface ViewRoute {
  method: 'GET' | 'DELETE';
  /** Over the raw path after the prefix; captures are percent-decoded. */
  pattern: RegExp;
  /** The path the legacy route table is asked for, built from the decoded captures. */
  path: (params: string[]) => string;
  /** Everything the subject must be allowed, in the legacy API's namespace `ns`. */
  access: (params: string[], ns: string) => Access[];
}

/** Where the REST API mounts the legacy views. */
export const LEGACY_VIEWS_PREFIX = '/api/legacy';

const at = (pattern: string) => new RegExp(`^${pattern}$`);
const enc = encodeURIComponent;

/** Reading an aggregate reads the results (events) it counts and the check definitions naming it. */
const aggregateRead = (ns: string): Access[] => [
  { verb: 'list', resource: 'events', namespace: ns },
  { verb: 'list', resource: 'checks', namespace: ns },
];

/**
 * The route table of the legacy views: clients are entities of the legacy namespace, aggregates
 * its events and checks, stashes the cluster-wide resource `stashes` (no namespace: only a
 * ClusterRoleBinding grants it, as stashes belong to no namespace).
 */
const VIEW_ROUTES: readonly ViewRoute[] = [
  {
    method: 'GET',
    pattern: at('/clients'),
    path: () => '/clients',
    access: (_, ns) => [{ verb: 'list', resource: 'entities', namespace: ns }],
  },
  {
    method: 'GET',
    pattern: at(`/clients/${NAME}`),
    path: ([name]) => `/clients/${enc(name!)}`,
    access: ([name], ns) => [{ verb: 'get', resource: 'entities', namespace: ns, name }],
  },
  {
    method: 'DELETE',
    pattern: at(`/clients/${NAME}`),
    path: ([name]) => `/clients/${enc(name!)}`,
    access: ([name], ns) => [{ verb: 'delete', resource: 'entities', namespace: ns, name }],
  },
  {
    method: 'GET',
    pattern: at(`/clients/${NAME}/history`),
    path: ([name]) => `/clients/${enc(name!)}/history`,
    access: ([name], ns) => [
      { verb: 'get', resource: 'entities', namespace: ns, name },
      { verb: 'list', resource: 'events', namespace: ns },
    ],
  },
  {
    method: 'GET',
    pattern: at('/aggregates'),
    path: () => '/aggregates',
    access: (_, ns) => aggregateRead(ns),
  },
  {
    method: 'GET',
    pattern: at(`/aggregates/${NAME}`),
    path: ([name]) => `/aggregates/${enc(name!)}`,
    access: (_, ns) => aggregateRead(ns),
  },
  {
    method: 'GET',
    pattern: at(`/aggregates/${NAME}/(clients|checks)`),
    path: ([name, part]) => `/aggregates/${enc(name!)}/${part}`,
    access: (_, ns) => aggregateRead(ns),
  },
  {
    method: 'GET',
    pattern: at(`/aggregates/${NAME}/results/${NAME}`),
    path: ([name, severity]) => `/aggregates/${enc(name!)}/results/${enc(severity!)}`,
    access: (_, ns) => aggregateRead(ns),
  },
  // Deleting an aggregate drops the results counted so far from it (a tombstone): a delete of events.
  {
    method: 'DELETE',
    pattern: at(`/aggregates/${NAME}`),
    path: ([name]) => `/aggregates/${enc(name!)}`,
    access: (_, ns) => [{ verb: 'delete', resource: 'events', namespace: ns }],
  },
  {
    method: 'GET',
    pattern: at('/stashes'),
    path: () => '/stashes',
    access: () => [{ verb: 'list', resource: 'stashes' }],
  },
  {
    method: 'GET',
    pattern: at('/stash(?:es)?/(.+)'),
    path: ([path]) => `/stashes/${enc(path!)}`,
    access: ([path]) => [{ verb: 'get', resource: 'stashes', name: path }],
  },
  {
    method: 'DELETE',
    pattern: at('/stash(?:es)?/(.+)'),
    path: ([path]) => `/stashes/${enc(path!)}`,
    access: ([path]) => [{ verb: 'delete', resource: 'stashes', name: path }],
  },
];

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
};

/** The view route of a request, its decoded captures; undefined when none serves it. */
function viewRoute(method: string, rawPath: string): { route: ViewRoute; params: string[] } | undefined {
  const m = method === 'HEAD' ? 'GET' : method;
  for (const route of VIEW_ROUTES) {
    if (route.method !== m) continue;
    const found = route.pattern.exec(rawPath);
    if (!found) continue;
    const params = found.slice(1).map((p) => decode(p ?? ''));
    if (params.some((p) => p === undefined)) return undefined;
    return { route, params: params as string[] };
  }
  return undefined;
}

/** The methods of the view routes whose pattern matches a raw path (`GET` alone for the prefix itself). */
const viewMethods = (rawPath: string): string[] =>
  rawPath === '' || rawPath === '/'
    ? ['GET']
    : [...new Set(VIEW_ROUTES.filter((r) => r.pattern.test(rawPath)).map((r) => r.method))];

/** What `GET /api/legacy` answers: whether this node serves the legacy views, and of which namespace. */
type LegacyViewState = { enabled: true; namespace: string } | { enabled: false };

/**
 * `/api/legacy` (LEGACY_VIEWS_PREFIX): `GET /api/legacy` says whether the legacy API is on, and
 * `/api/legacy/<legacy path>` answers what the legacy port answers for the routes of VIEW_ROUTES,
 * after the subject's token or API key and RBAC (403 `{message, code}` naming what is missing).
 * `legacy` is undefined when the node's legacy API is off (`--legacy-api-port 0`): then every view
 * is a 404 saying so.
 */
export function legacyViewRoutes(svc: ApiServices, legacy: LegacyServices | undefined): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const view = legacy && buildLegacyView(legacy);
  app.get('/', (c) =>
    c.json<LegacyViewState>(legacy ? { enabled: true, namespace: legacy.namespace } : { enabled: false }),
  );
  app.all('/*', async (c) => {
    if (!legacy || !view)
      throw new ApiError('not_found', 'the legacy API is off on this node (--legacy-api-port is 0)');
    const url = new URL(c.req.url);
    const rawPath = url.pathname.slice(LEGACY_VIEWS_PREFIX.length);
    const found = viewRoute(c.req.method, rawPath);
    const methods = found ? [] : viewMethods(rawPath);
    if (methods.length > 0 && !methodServed(c.req.method, methods))
      throw methodNotAllowed(c.req.method, url.pathname, methods);
    if (!found)
      throw new ApiError('not_found', `the legacy views do not serve ${c.req.method} ${rawPath || '/'}`);
    for (const access of found.route.access(found.params, legacy.namespace)) authorize(c, svc, access);
    const forwarded = new Request(`http://legacy${found.route.path(found.params)}${url.search}`, {
      method: c.req.method,
      headers: c.req.header('X-Request-ID') ? { 'X-Request-ID': c.req.header('X-Request-ID')! } : {},
    });
    return view.fetch(forwarded);
  });
  return app;
}
