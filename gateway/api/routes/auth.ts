import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { LoginBlockedError } from '../../auth/login-limits.ts';
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

/** A blocked caller's answer: 429 with `Retry-After` in seconds. */
const tooMany = (err: unknown) => {
  if (!(err instanceof LoginBlockedError)) return err;
  return new ApiError('too_many_requests', err.message, { 'Retry-After': String(err.retryAfterSec) });
};

/**
 * `/auth` (Basic credentials → tokens), `/auth/test`, `/auth/token` (refresh) and `/auth/logout`.
 * Credentials are local users or users of a configured LDAP/AD provider. Failed logins are counted
 * per user name and peer address, failed refreshes per address (docs/compatibility.md#login-limits).
 */
export function authRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const login = async (c: Context) => {
    const creds = basic(c);
    if (!creds) throw new ApiError('unauthenticated', 'missing credentials: send Basic authentication');
    const caller = { user: creds.user, address: getConnInfo(c).remote.address };
    const who = await svc.loginLimits
      .check(caller, () => svc.auth.login(creds.user, creds.password))
      .catch((err: unknown) => {
        throw tooMany(err);
      });
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
    // A refresh token cannot be guessed, but an address trying many is counted like failed logins.
    const caller = { address: getConnInfo(c).remote.address };
    await svc.loginLimits.admit(caller).catch((err: unknown) => {
      throw tooMany(err);
    });
    try {
      return c.json(await svc.tokens.refresh(access, refresh_token, (s) => svc.auth.current(s)));
    } catch (err) {
      if (!(err instanceof RefreshRefusedError)) throw err;
      await svc.loginLimits.failed(caller);
      throw new ApiError(err.kind, err.message);
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
