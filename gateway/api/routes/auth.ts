import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { RefreshRefusedError } from '../../auth/tokens.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { readJson, validate } from '../http.ts';

const RefreshBody = v.object({
  refresh_token: v.pipe(v.string(), v.minLength(1, 'refresh_token is required')),
});

function basic(c: Context): { user: string; password: string } | undefined {
  const h = c.req.header('Authorization') ?? '';
  if (!/^basic /i.test(h)) return undefined;
  const decoded = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? undefined : { user: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

const bearer = (c: Context) =>
  /^bearer /i.test(c.req.header('Authorization') ?? '')
    ? c.req.header('Authorization')!.slice(7).trim()
    : undefined;

/**
 * `/auth` (Basic credentials → tokens), `/auth/test`, `/auth/token` (refresh) and `/auth/logout`.
 * Credentials are local users or users of a configured LDAP/AD provider.
 */
export function authRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const login = async (c: Context) => {
    const creds = basic(c);
    if (!creds) throw new ApiError('unauthenticated', 'missing credentials: send Basic authentication');
    const who = await svc.auth.login(creds.user, creds.password);
    if (!who) throw new ApiError('unauthenticated', 'bad credentials');
    return who;
  };

  app.get('/auth', async (c) => c.json(await svc.tokens.issue(await login(c))));
  app.get('/auth/test', async (c) => {
    await login(c);
    return c.body(null, 200);
  });

  app.post('/auth/token', async (c) => {
    const access = bearer(c);
    if (!access) throw new ApiError('invalid_argument', 'invalid access token');
    const { refresh_token } = validate(RefreshBody, await readJson(c), 'refresh request');
    try {
      return c.json(await svc.tokens.refresh(access, refresh_token, (s) => svc.auth.current(s)));
    } catch (err) {
      if (err instanceof RefreshRefusedError) throw new ApiError(err.kind, err.message);
      throw err;
    }
  });

  app.post('/auth/logout', async (c) => {
    const access = bearer(c);
    const claims = access ? await svc.tokens.verifyAccess(access) : undefined;
    if (!claims) throw new ApiError('unauthenticated', 'the access token is invalid or expired');
    await svc.tokens.logout(claims);
    return c.body(null, 200);
  });

  return app;
}
