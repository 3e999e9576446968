import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { Hono, type Context, type Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ActorError } from '../../actors/runtime/types.ts';
import type { LegacyEnv, LegacyServices } from './env.ts';
import { LegacyError, empty, json } from './http.ts';
import { dispatch, type LegacyRoute } from './router.ts';
import { legacyRoutes } from './routes/index.ts';

const DEFAULTS = {
  /** Largest request body read; the legacy API had none, a stash or a result is far smaller. */
  maxBodyBytes: 1 << 20,
  /** A request id longer than this is replaced by a fresh one rather than echoed. */
  maxRequestIdLength: 200,
} as const;

interface LegacyApiOptions {
  /** `--legacy-api-user` and `--legacy-api-password`: Basic auth only when both are set. */
  user: string;
  password: string;
  /** `Access-Control-Allow-<key>` headers; none when empty. */
  cors: Readonly<Record<string, string>>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The Basic credentials check, before routing (so an unknown path without them is a 401 too). The
 * decoded value is split at its first colon, so a password may hold one (docs/compatibility.md#legacy-api).
 */
function basicAuth(opts: LegacyApiOptions) {
  const want = digest(`${opts.user}:${opts.password}`);
  return (header: string | undefined): boolean => {
    // The scheme is case-insensitive (RFC 7235; Rack's Basic auth lowercases it too).
    const m = /^basic ([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
    if (!m) return false;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    if (!decoded.includes(':')) return false;
    return timingSafeEqual(digest(decoded), want);
  };
}

/** The request id of every answer: the request's `X-Request-ID` when it is sane, else a fresh UUID. */
function requestIds(app: Hono<LegacyEnv>, cors: Readonly<Record<string, string>>): void {
  app.use('*', async (c: Context<LegacyEnv>, next: Next) => {
    const given = c.req.header('X-Request-ID');
    const id =
      given && given.length <= DEFAULTS.maxRequestIdLength && !/[\r\n]/.test(given) ? given : randomUUID();
    c.set('requestId', id);
    await next();
    c.header('X-Request-ID', id);
    for (const [k, value] of Object.entries(cors)) c.header(`Access-Control-Allow-${k}`, value);
  });
}

/**
 * What follows the credentials on both mounts: the stores' check, the body limit, the route table
 * and the legacy error answers.
 */
function serveRoutes(app: Hono<LegacyEnv>, svc: LegacyServices, routes: readonly LegacyRoute[]): void {
  app.use('*', async (c, next) => {
    if (c.req.path !== '/info' && c.req.path !== '/health') {
      const reason = svc.unavailable();
      if (reason) return json(c, 500, { error: reason });
    }
    await next();
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: DEFAULTS.maxBodyBytes,
      onError: (c) => json(c, 413, { error: `request body larger than ${DEFAULTS.maxBodyBytes} bytes` }),
    }),
  );
  app.all('*', (c) => dispatch(routes, c));

  app.onError((err, c) => {
    if (err instanceof LegacyError)
      return err.body ? json(c, err.status as 500, err.body) : empty(c, err.status);
    if (err instanceof ActorError) {
      if (err.code === 'not_found') return empty(c, 404);
      if (err.code === 'invalid') return empty(c, 400);
      return json(c, 500, { error: err.message });
    }
    svc.log.error('legacy API request failed', {
      method: c.req.method,
      path: c.req.path,
      error: (err as Error).message,
    });
    return json(c, 500, { error: 'internal error' });
  });
}

/**
 * The legacy API (port 4567) of a node: request id, CORS, `OPTIONS`, Basic auth, the stores' check,
 * then the route table (docs/compatibility.md#legacy-api). A view over the same actors and stores as
 * the REST API; it has its own credentials and none of the REST API's RBAC.
 */
export function buildLegacyApi(svc: LegacyServices, opts: LegacyApiOptions): Hono<LegacyEnv> {
  const app = new Hono<LegacyEnv>();
  const authorized = opts.user && opts.password ? basicAuth(opts) : undefined;
  requestIds(app, opts.cors);
  app.use('*', async (c, next) => {
    if (c.req.method === 'OPTIONS') return empty(c, 200);
    if (authorized && !authorized(c.req.header('Authorization'))) {
      c.header('WWW-Authenticate', 'Basic realm="Restricted Area"');
      return empty(c, 401);
    }
    await next();
  });
  serveRoutes(app, svc, legacyRoutes(svc, !!authorized));
  return app;
}

/**
 * The same route table with no credentials, CORS or `OPTIONS` of its own, for the REST API to mount
 * behind its authentication and RBAC (gateway/api/routes/legacy.ts,
 * docs/compatibility.md#the-legacy-views-on-the-api-port). It answers exactly as the legacy port does,
 * for the routes the REST API lets through.
 */
export function buildLegacyView(svc: LegacyServices): Hono<LegacyEnv> {
  const app = new Hono<LegacyEnv>();
  requestIds(app, {});
  serveRoutes(app, svc, legacyRoutes(svc, false));
  return app;
}
