/**
 * Calls of the authentication providers suites (authproviders.test.ts, the API;
 * authproviders-login.test.ts, directory login): as the administrator, a provider's PUT, and a
 * login through `/auth` with a user's password.
 */
import { adminAuth, getJson, type Backend } from '../../harness/index.ts';
import { basic } from '../../harness/api.ts';

export const BASE = '/api/enterprise/authentication/v2/authproviders';

export function providerCalls(backend: () => Backend) {
  const url = (path: string) => `${backend().apiUrl}${path}`;
  const admin = (path: string, init: Parameters<typeof getJson>[1] = {}) =>
    getJson(url(path), {
      ...init,
      headers: { ...adminAuth, ...(init.headers as Record<string, string> | undefined) },
    });
  const put = (name: string, body: unknown) =>
    admin(`${BASE}/${name}`, { method: 'PUT', body: body as object });
  const login = (user: string, password: string) => getJson(url('/auth'), { headers: basic(user, password) });
  return { url, admin, put, login };
}
