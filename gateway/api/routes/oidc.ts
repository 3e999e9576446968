import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import * as v from 'valibot';
import { API_PREFIXES } from '../../../proto/api.ts';
import { OIDC_FLOW_TTL_SEC, OidcLoginError } from '../../auth/oidc/login.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { readJson, validate } from '../http.ts';

// The OIDC login's public routes (docs/compatibility.md#oidc), under the authentication providers'
// prefix as Sensu's are: `GET /oidc/authorize` sends the browser to the provider, `GET /oidc/callback`
// takes it back and sends it to the dashboard with a one-time handoff key, which the dashboard trades
// for the tokens at `POST /oidc/handoff`. `GET /auth/methods` tells the sign-in page what exists.

const PREFIX = `${API_PREFIXES['authentication/v2']}/oidc`;
/** The browser secret that binds a login's state and its handoff to the browser that began it. */
const COOKIE = 'monitor_oidc';

const HandoffBody = v.object({
  handoff: v.pipe(v.string('handoff must be a string'), v.minLength(1, 'handoff is required')),
});

const refused = (err: unknown) => (err instanceof OidcLoginError ? new ApiError(err.kind, err.message) : err);

/** A browser (it asks for HTML) is sent to the sign-in page with the message; other clients get JSON. */
const wantsPage = (c: Context) => (c.req.header('Accept') ?? '').includes('text/html');

export function oidcRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.get('/auth/methods', (c) =>
    c.json({
      password: true,
      oidc: svc.oidc.providers().map((p) => ({
        name: p.metadata.name,
        authorize: `${PREFIX}/authorize?provider=${encodeURIComponent(p.metadata.name)}`,
      })),
    }),
  );

  app.get(`${PREFIX}/authorize`, async (c) => {
    const url = new URL(c.req.url);
    const { location, browser } = await svc.oidc
      .begin(c.req.query('provider') || undefined, `${url.origin}${PREFIX}/callback`)
      .catch((err: unknown) => {
        throw refused(err);
      });
    setCookie(c, COOKIE, browser, {
      path: PREFIX,
      httpOnly: true,
      sameSite: 'Lax',
      secure: url.protocol === 'https:',
      maxAge: OIDC_FLOW_TTL_SEC,
    });
    c.header('Cache-Control', 'no-store');
    return c.redirect(location, 302);
  });

  app.get(`${PREFIX}/callback`, async (c) => {
    const browser = getCookie(c, COOKIE);
    const query = new URL(c.req.url).searchParams;
    c.header('Cache-Control', 'no-store');
    try {
      const who = await svc.oidc.finish(query, browser);
      const tokens = await svc.tokens.issue(who);
      const key = await svc.oidc.handOff(browser!, { username: who.username, ...tokens });
      return c.redirect(`/#/signin?oidc_handoff=${encodeURIComponent(key)}`, 302);
    } catch (err) {
      if (!(err instanceof OidcLoginError) || !wantsPage(c)) throw refused(err);
      return c.redirect(`/#/signin?oidc_error=${encodeURIComponent(err.message)}`, 302);
    }
  });

  app.post(`${PREFIX}/handoff`, async (c) => {
    const { handoff } = validate(HandoffBody, await readJson(c), 'OIDC handoff');
    const body = await svc.oidc.takeHandoff(handoff, getCookie(c, COOKIE)).catch((err: unknown) => {
      throw refused(err);
    });
    deleteCookie(c, COOKIE, { path: PREFIX });
    c.header('Cache-Control', 'no-store');
    return c.json(body);
  });

  return app;
}
