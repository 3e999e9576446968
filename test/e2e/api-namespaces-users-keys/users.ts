/**
 * Calls of the namespaces, users and keys suite made without the administrator's API key: the
 * `/auth` routes with the given headers, a user's login, and a new user to log in as.
 */
import * as assert from 'uvu/assert';
import { getJson, type Backend } from '../../harness/index.ts';
import { basic, coreApi, created, fresh } from '../../harness/api.ts';

export interface Tokens {
  access_token: string;
  expires_at: number;
  refresh_token: string;
}

export function userCalls(backend: () => Backend) {
  const api = coreApi(backend);

  /** A call to `path` with these headers only (no API key). */
  const auth = (path: string, headers: Record<string, string>, method = 'GET', body?: unknown) =>
    getJson(`${backend().apiUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: body as object }),
    });

  async function login(user: string, pw: string): Promise<Tokens> {
    const r = await auth('/auth', basic(user, pw));
    assert.is(r.status, 200, `login ${user}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as Tokens;
  }

  async function newUser(
    groups: string[] = [],
    password = 'Secret-pass-1',
  ): Promise<{ name: string; password: string }> {
    const name = fresh('user');
    created(await api('/users', 'POST', { username: name, password, groups }), `POST user ${name}`);
    return { name, password };
  }

  return { auth, login, newUser };
}
