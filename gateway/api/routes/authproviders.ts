import { Hono, type Context } from 'hono';
import { configKeys } from '../../../proto/names.ts';
import {
  AuthProviderSchema,
  missingProviderAttributes,
  normalizeProvider,
  withProviderDefaults,
  type AuthProvider,
} from '../../../proto/schemas/resources/authproviders.ts';
import { withoutClientSecret } from '../../../proto/schemas/resources/oidc-provider.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, readJson, sendOne, validate } from '../http.ts';
import { page, pagingOf } from '../paginate.ts';

/**
 * Authentication providers (`authentication/v2`), docs/compatibility.md#authentication-providers: list
 * (filtered by repeatable `types`, paginated), get, create-or-replace with PUT (200; 400 for a payload
 * missing an attribute a PUT must hold), delete. Mounted at `/api/enterprise/authentication/v2`.
 */
export function authProviderRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const key = (name: string) => configKeys.cluster('authproviders', name);

  /**
   * How providers are shown: an OIDC client secret never (docs/compatibility.md#oidc), except with
   * `?include_secrets=true` (monitorctl dump --include-secrets) to a subject that may update every
   * provider, who could set the secret anyway.
   */
  const viewFor = (c: Context<ApiEnv>): ((p: AuthProvider) => AuthProvider) => {
    if (c.req.query('include_secrets') === 'true') {
      authorize(c, svc, { verb: 'update', resource: 'authproviders', name: '' });
      return (p) => p;
    }
    return (p) => (p.type === 'oidc' ? withoutClientSecret(p) : p);
  };

  app.get('/authproviders', (c) => {
    authorize(c, svc, { verb: 'list', resource: 'authproviders' });
    const types = new Set(
      (c.req.queries('types') ?? [])
        .flatMap((t) => t.split(','))
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean),
    );
    const entries = svc.config
      .entries<AuthProvider>(configKeys.prefix('authproviders'))
      .filter((e) => types.size === 0 || types.has(e.value.type));
    const view = viewFor(c);
    return c.json(page(c, entries, (e) => e.key, pagingOf(c)).map((e) => view(e.value)));
  });

  app.get('/authproviders/:name', (c) => {
    const name = c.req.param('name');
    authorize(c, svc, { verb: 'get', resource: 'authproviders', name });
    const p = svc.config.get<AuthProvider>(key(name));
    if (!p) throw new ApiError('not_found', `authentication provider "${name}" not found`);
    return sendOne(c, viewFor(c)(p));
  });

  app.put('/authproviders/:name', async (c) => {
    const name = c.req.param('name');
    authorize(c, svc, { verb: 'update', resource: 'authproviders', name });
    const body = await readJson(c);
    const missing = missingProviderAttributes(body);
    if (missing.length)
      throw new ApiError(
        'invalid_argument',
        `malformed authentication provider: missing ${missing.join(', ')}`,
      );
    const provider = validate(AuthProviderSchema, normalizeProvider(body), 'authentication provider');
    if (provider.metadata.name !== name)
      throw new ApiError(
        'invalid_argument',
        `the name in the body ("${provider.metadata.name}") differs from the URL ("${name}")`,
      );
    await svc.config.put(
      key(name),
      withProviderDefaults(keepClientSecret(provider, svc.config.get(key(name)))),
    );
    return c.body(null, 200);
  });

  app.delete('/authproviders/:name', (c) => remove(c, svc, c.req.param('name')));
  return app;
}

/**
 * An OIDC provider replaced without `client_secret` keeps the stored one: reads never show it, so a
 * read-modify-write must not lose it. `"client_secret": ""` removes it (a public client).
 */
function keepClientSecret(next: AuthProvider, stored: AuthProvider | undefined): AuthProvider {
  if (next.type !== 'oidc' || next.spec.client_secret !== undefined || stored?.type !== 'oidc') return next;
  if (stored.spec.client_secret === undefined) return next;
  return { ...next, spec: { ...next.spec, client_secret: stored.spec.client_secret } };
}

/** Also reachable as DELETE /api/core/v2/namespaces/:ns/authproviders/:name (spec rule 3). */
export async function remove(c: Context<ApiEnv>, svc: ApiServices, name: string): Promise<Response> {
  authorize(c, svc, { verb: 'delete', resource: 'authproviders', name });
  if (!(await svc.config.remove(configKeys.cluster('authproviders', name))))
    throw new ApiError('not_found', `authentication provider "${name}" not found`);
  return c.body(null, 204);
}
