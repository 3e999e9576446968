// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { getJson, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { basic, bearer, coreApi, created, fresh, isError, keyAuth, type Body } from '../harness/api.ts';
import { userCalls, type Tokens } from './api-namespaces-users-keys/users.ts';

// The REST contract of namespaces (a namespace that still holds resources is not deleted), users
// (hashed passwords never shown, DELETE disables, reinstate, passwords set by an administrator or
// changed by the user, groups, what a user may do to itself), API keys, and tokens (login,
// refresh, logout, test).

let backend: Backend;

const api = coreApi(() => backend);

const { auth, login, newUser } = userCalls(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'api-ns-users' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await backend?.stop();
});

// --- namespaces ---------------------------------------------------------------------------------

test('namespaces: create 201, list, GET one with ETag, 409 on duplicate, PUT', async () => {
  const name = fresh('ns');
  created(await api('/namespaces', 'POST', { name }), 'POST');
  isError(await api('/namespaces', 'POST', { name }), 409, 'POST again');
  const list = await api<Body[]>('/namespaces');
  assert.is(list.status, 200);
  assert.ok(
    list.body.some((n) => n.name === name),
    `${name} listed: ${JSON.stringify(list.body)}`,
  );
  assert.ok(
    list.body.some((n) => n.name === 'default'),
    'default listed',
  );
  const one = await api(`/namespaces/${name}`);
  assert.is(one.status, 200);
  assert.equal(one.body, { name });
  assert.ok(one.headers.get('etag'));
  isError(await api(`/namespaces/${fresh('missing')}`), 404, 'GET a missing namespace');

  const put = fresh('ns-put');
  created(await api(`/namespaces/${put}`, 'PUT', { name: put }), 'PUT create');
  assert.is((await api(`/namespaces/${put}`)).status, 200);
  isError(await api(`/namespaces/${put}`, 'PUT', { name: 'another' }), 400, 'PUT with another name');
  isError(await api('/namespaces', 'POST', { name: 'has space' }), 400, 'a bad name');
  isError(await api('/namespaces', 'POST', {}), 400, 'no name');
  // A new namespace is usable at once.
  created(
    await api(`/namespaces/${name}/checks`, 'POST', {
      command: 'true',
      interval: 10,
      metadata: { name: 'c' },
    }),
    'a check in the new namespace',
  );
  assert.is((await api(`/namespaces/${name}/checks/c`, 'DELETE')).status, 204);
});

test('namespaces: deleting one that holds a check and an entity is 409 naming them; empty 204', async () => {
  const ns = fresh('ns-full');
  const check = fresh('held-check');
  const entity = fresh('held-entity');
  created(await api('/namespaces', 'POST', { name: ns }), 'POST namespace');
  created(
    await api(`/namespaces/${ns}/checks`, 'POST', {
      command: 'true',
      interval: 10,
      metadata: { name: check },
    }),
    'check',
  );
  created(await api(`/namespaces/${ns}/entities`, 'POST', { metadata: { name: entity } }), 'entity');
  // The entity list trails the write by the read model's watch.
  const refused = await waitFor(
    async () => {
      const r = await api(`/namespaces/${ns}`, 'DELETE');
      return r.status === 409 && String(r.body.message).includes(entity) ? r : undefined;
    },
    { timeoutMs: 5000, intervalMs: 50, what: 'a 409 naming the entity' },
  );
  isError(refused, 409, 'DELETE a namespace holding resources');
  assert.match(refused.body.message, /checks/);
  assert.ok(refused.body.message.includes(check), `message names the check: ${refused.body.message}`);
  assert.match(refused.body.message, /entities/);
  assert.not.match(refused.body.message, /system:pipeline/, 'the seeded role does not count');
  assert.is((await api(`/namespaces/${ns}`)).status, 200, 'still there');

  assert.is((await api(`/namespaces/${ns}/checks/${check}`, 'DELETE')).status, 204);
  assert.is((await api(`/namespaces/${ns}/entities/${entity}`, 'DELETE')).status, 204);
  const deleted = await waitFor(
    async () => {
      const r = await api(`/namespaces/${ns}`, 'DELETE');
      return r.status === 409 ? undefined : r;
    },
    { timeoutMs: 5000, intervalMs: 50, what: 'the namespace to become deletable' },
  );
  assert.is(deleted.status, 204, `DELETE the empty namespace: ${JSON.stringify(deleted.body)}`);
  isError(await api(`/namespaces/${ns}`), 404, 'GET after DELETE');
  isError(await api(`/namespaces/${ns}`, 'DELETE'), 404, 'DELETE again');
  isError(
    await api(`/namespaces/${ns}/checks`, 'POST', { command: 'true', interval: 10, metadata: { name: 'c' } }),
    404,
    'nothing is created in a deleted namespace',
  );
  const list = await api<Body[]>('/namespaces');
  assert.not.ok(list.body.some((n) => n.name === ns));
});

// --- users --------------------------------------------------------------------------------------

test('users: POST 201, password never shown, 409, GET and list', async () => {
  const { name } = await newUser(['dev']);
  isError(await api('/users', 'POST', { username: name, password: 'Secret-pass-1' }), 409, 'POST again');
  const one = await api(`/users/${name}`);
  assert.is(one.status, 200, JSON.stringify(one.body));
  assert.is(one.body.username, name);
  assert.equal(one.body.groups, ['dev']);
  assert.is(one.body.disabled, false);
  assert.not.ok('password' in one.body, 'no password');
  assert.not.ok('password_hash' in one.body, 'no password_hash');
  assert.ok(one.headers.get('etag'));
  const list = await api<Body[]>('/users');
  assert.is(list.status, 200);
  assert.ok(list.body.some((u) => u.username === name));
  assert.ok(list.body.some((u) => u.username === 'admin'));
  for (const u of list.body) {
    assert.not.ok(
      'password' in u || 'password_hash' in u,
      `user ${u.username} listed without password fields`,
    );
  }
  isError(await api(`/users/${fresh('nobody')}`), 404, 'GET a missing user');
  isError(
    await api('/users', 'POST', { username: fresh('short'), password: 'short' }),
    400,
    'a short password',
  );
  isError(await api('/users', 'POST', { username: fresh('nopw') }), 400, 'no password');
  isError(await api('/users', 'POST', { password: 'Secret-pass-1' }), 400, 'no username');
});

test('users: PUT replace keeps the password when none is given', async () => {
  const { name, password } = await newUser(['dev']);
  created(await api(`/users/${name}`, 'PUT', { username: name, groups: ['ops'] }), 'PUT without password');
  const one = await api(`/users/${name}`);
  assert.equal(one.body.groups, ['ops']);
  assert.is((await auth('/auth/test', basic(name, password))).status, 200, 'the old password still works');
  created(
    await api(`/users/${name}`, 'PUT', { username: name, password: 'Replaced-pass-2', groups: [] }),
    'PUT with a password',
  );
  isError(await auth('/auth/test', basic(name, password)), 401, 'the old password after a replace');
  assert.is((await auth('/auth/test', basic(name, 'Replaced-pass-2'))).status, 200);
  isError(await api(`/users/${name}`, 'PUT', { username: 'someone-else' }), 400, 'PUT with another username');
  const created2 = fresh('user-put');
  created(await api(`/users/${created2}`, 'PUT', { password: 'Secret-pass-1' }), 'PUT creates');
  assert.is((await api(`/users/${created2}`)).body.username, created2);
});

test('users: DELETE disables (no more tokens), reinstate brings the user back', async () => {
  const { name, password } = await newUser();
  const tokens = await login(name, password);
  assert.is(
    (await api(`/users/${name}`, 'GET', undefined, bearer(tokens.access_token))).status,
    200,
    'the user reads itself',
  );
  assert.is((await api(`/users/${name}`, 'DELETE')).status, 204, 'DELETE');
  const one = await api(`/users/${name}`);
  assert.is(one.status, 200, 'a disabled user is still shown');
  assert.is(one.body.disabled, true);
  isError(await auth('/auth', basic(name, password)), 401, 'a disabled user cannot log in');
  isError(
    await api(`/users/${name}`, 'GET', undefined, bearer(tokens.access_token)),
    401,
    "a disabled user's token is refused",
  );
  created(await api(`/users/${name}/reinstate`, 'PUT'), 'reinstate');
  assert.is((await api(`/users/${name}`)).body.disabled, false);
  await login(name, password);
  isError(await api(`/users/${fresh('nobody')}`, 'DELETE'), 404, 'DELETE a missing user');
});

test('users: PUT /password by the administrator', async () => {
  const { name, password } = await newUser();
  created(
    await api(`/users/${name}/password`, 'PUT', { username: name, password_new: 'Admin-set-pass-3' }),
    'PUT password',
  );
  isError(await auth('/auth/test', basic(name, password)), 401, 'the old password');
  assert.is((await auth('/auth/test', basic(name, 'Admin-set-pass-3'))).status, 200, 'the new password');
  isError(await api(`/users/${name}/password`, 'PUT', {}), 400, 'no password');
  isError(
    await api(`/users/${fresh('nobody')}/password`, 'PUT', { password_new: 'Admin-set-pass-3' }),
    404,
    'a missing user',
  );
  // A plain user may not set a password, not even its own, by this route.
  const tokens = await login(name, 'Admin-set-pass-3');
  isError(
    await api(
      `/users/${name}/password`,
      'PUT',
      { password_new: 'Self-set-pass-4' },
      bearer(tokens.access_token),
    ),
    403,
    'a user on the administrator route',
  );
});

test('users: PUT /change_password by the user with a Bearer token; a wrong current password is 401', async () => {
  const { name, password } = await newUser();
  const tokens = await login(name, password);
  assert.type(tokens.access_token, 'string');
  assert.type(tokens.refresh_token, 'string');
  assert.type(tokens.expires_at, 'number');
  assert.ok(tokens.expires_at > Date.now() / 1000, 'expires in the future');

  isError(
    await api(
      `/users/${name}/change_password`,
      'PUT',
      { username: name, password: 'wrong-current', password_new: 'Changed-pass-5' },
      bearer(tokens.access_token),
    ),
    401,
    'wrong current password',
  );
  assert.is((await auth('/auth/test', basic(name, password))).status, 200, 'unchanged after the refusal');
  created(
    await api(
      `/users/${name}/change_password`,
      'PUT',
      { username: name, password, password_new: 'Changed-pass-5' },
      bearer(tokens.access_token),
    ),
    'change_password',
  );
  isError(await auth('/auth/test', basic(name, password)), 401, 'the old password');
  assert.is((await auth('/auth/test', basic(name, 'Changed-pass-5'))).status, 200, 'the new password');

  // Not for someone else's password.
  const other = await newUser();
  isError(
    await api(
      `/users/${other.name}/change_password`,
      'PUT',
      { password: other.password, password_new: 'Changed-pass-6' },
      bearer(tokens.access_token),
    ),
    403,
    "another user's password",
  );
});

test('users: groups PUT 201, DELETE one 204, DELETE all 204', async () => {
  const { name } = await newUser(['dev']);
  created(await api(`/users/${name}/groups/ops`, 'PUT'), 'PUT group ops');
  created(await api(`/users/${name}/groups/ops`, 'PUT'), 'PUT group ops again');
  created(await api(`/users/${name}/groups/qa`, 'PUT'), 'PUT group qa');
  assert.equal((await api(`/users/${name}`)).body.groups, ['dev', 'ops', 'qa']);
  assert.is((await api(`/users/${name}/groups/ops`, 'DELETE')).status, 204, 'DELETE group');
  assert.equal((await api(`/users/${name}`)).body.groups, ['dev', 'qa']);
  isError(await api(`/users/${name}/groups/ops`, 'DELETE'), 404, 'DELETE a group the user is not in');
  assert.is((await api(`/users/${name}/groups`, 'DELETE')).status, 204, 'DELETE all groups');
  assert.equal((await api(`/users/${name}`)).body.groups, []);
  isError(await api(`/users/${fresh('nobody')}/groups/ops`, 'PUT'), 404, 'a missing user');
});

test('users: a user may GET itself but not list users or read others (403); groups grant access', async () => {
  const { name, password } = await newUser();
  const { access_token } = await login(name, password);
  const self = await api(`/users/${name}`, 'GET', undefined, bearer(access_token));
  assert.is(self.status, 200);
  assert.is(self.body.username, name);
  isError(await api('/users', 'GET', undefined, bearer(access_token)), 403, 'list users');
  isError(await api('/users/admin', 'GET', undefined, bearer(access_token)), 403, 'read another user');
  isError(
    await api('/namespaces/default/checks', 'GET', undefined, bearer(access_token)),
    403,
    'list checks without a role',
  );
  isError(
    await api('/users', 'POST', { username: fresh('x'), password: 'Secret-pass-1' }, bearer(access_token)),
    403,
    'create a user',
  );
  // Group membership is read at each request: cluster-admins may do everything at once.
  created(await api(`/users/${name}/groups/cluster-admins`, 'PUT'), 'join cluster-admins');
  assert.is(
    (await api('/users', 'GET', undefined, bearer(access_token))).status,
    200,
    'list users as a cluster admin',
  );
});

test('users: ?include_secrets=true shows password hashes to an administrator of users only (403 to a user reading itself)', async () => {
  const { name, password } = await newUser();
  const one = await api(`/users/${name}?include_secrets=true`);
  assert.is(one.status, 200);
  assert.match(one.body.password_hash, /^scrypt\$/);
  const list = await api<Body[]>('/users?include_secrets=true');
  assert.ok(list.body.every((u) => typeof u.password_hash === 'string'));
  // The hash restores the user elsewhere: written back as it is, the same password logs in.
  const copy = fresh('copy');
  created(
    await api('/users', 'POST', { username: copy, password_hash: one.body.password_hash }),
    'POST a hash',
  );
  assert.ok((await login(copy, password)).access_token);
  const { access_token } = await login(name, password);
  isError(
    await api(`/users/${name}?include_secrets=true`, 'GET', undefined, bearer(access_token)),
    403,
    'its own hash, as a user may read itself',
  );
});

// --- API keys -----------------------------------------------------------------------------------

test('apikeys: POST 201 with Location, the key authenticates, GET list/one, DELETE stops it', async () => {
  const r = await api('/apikeys', 'POST', { username: 'admin' });
  created(r, 'POST');
  const location = r.headers.get('location');
  assert.ok(location, 'Location header');
  const key = location!.split('/').pop()!;
  assert.match(location!, /^\/api\/core\/v2\/apikeys\/[0-9a-f-]{36}$/);
  assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

  assert.is(
    (await api('/namespaces/default/checks', 'GET', undefined, keyAuth(key))).status,
    200,
    'the key works',
  );
  const list = await api<Body[]>('/apikeys');
  assert.is(list.status, 200);
  const listed = list.body.find((k) => k.metadata?.name === key);
  assert.ok(listed, 'listed');
  assert.is(listed!.username, 'admin');
  const one = await api(`/apikeys/${key}`);
  assert.is(one.status, 200);
  assert.is(one.body.username, 'admin');
  assert.is(one.body.metadata.name, key);
  assert.type(one.body.created_at, 'number');

  assert.is((await api(`/apikeys/${key}`, 'DELETE')).status, 204, 'DELETE');
  isError(await api('/namespaces/default/checks', 'GET', undefined, keyAuth(key)), 401, 'the deleted key');
  isError(await api(`/apikeys/${key}`), 404, 'GET the deleted key');
  isError(await api(`/apikeys/${key}`, 'DELETE'), 404, 'DELETE again');
  isError(
    await api(
      '/namespaces/default/checks',
      'GET',
      undefined,
      keyAuth('00000000-0000-4000-8000-000000000000'),
    ),
    401,
    'an unknown key',
  );
});

test('apikeys: unknown user 400; a key acts as its user, and stops with a disabled user', async () => {
  isError(await api('/apikeys', 'POST', { username: fresh('nobody') }), 400, 'a key for an unknown user');
  isError(await api('/apikeys', 'POST', {}), 400, 'no username');
  const { name } = await newUser();
  const r = await api('/apikeys', 'POST', { username: name });
  created(r, 'POST');
  const key = r.headers.get('location')!.split('/').pop()!;
  const self = await api(`/users/${name}`, 'GET', undefined, keyAuth(key));
  assert.is(self.status, 200, 'the key reads its user');
  isError(
    await api('/namespaces/default/checks', 'GET', undefined, keyAuth(key)),
    403,
    "the key has its user's rights only",
  );
  assert.is((await api(`/users/${name}`, 'DELETE')).status, 204, 'disable the user');
  isError(await api(`/users/${name}`, 'GET', undefined, keyAuth(key)), 401, 'a key of a disabled user');
});

// --- tokens -------------------------------------------------------------------------------------

test('tokens: /auth/test 200/401; /auth 401 on bad credentials; no credentials 401', async () => {
  const { name, password } = await newUser();
  assert.is((await auth('/auth/test', basic(name, password))).status, 200);
  isError(await auth('/auth/test', basic(name, 'not-the-password')), 401, '/auth/test wrong password');
  isError(await auth('/auth/test', {}), 401, '/auth/test without credentials');
  isError(await auth('/auth', basic(name, 'not-the-password')), 401, '/auth wrong password');
  isError(await auth('/auth', basic(fresh('nobody'), 'whatever-pass')), 401, '/auth unknown user');
  isError(await auth('/auth', {}), 401, '/auth without credentials');
  isError(await getJson(`${backend.apiUrl}/api/core/v2/namespaces`), 401, 'an API call without credentials');
  isError(await api('/namespaces', 'GET', undefined, bearer('not.a.jwt')), 401, 'a garbage Bearer token');
  const t = await login('admin', 'P@ssw0rd!admin');
  assert.is(
    (await api('/namespaces', 'GET', undefined, bearer(t.access_token))).status,
    200,
    'the admin token works',
  );
});

test('tokens: /auth/token refresh gives new tokens; the old refresh token stops working', async () => {
  const { name, password } = await newUser(['cluster-admins']);
  const first = await login(name, password);
  const second = await auth('/auth/token', bearer(first.access_token), 'POST', {
    refresh_token: first.refresh_token,
  });
  assert.is(second.status, 200, `refresh: ${JSON.stringify(second.body)}`);
  const t2 = second.body as Tokens;
  assert.type(t2.access_token, 'string');
  assert.type(t2.refresh_token, 'string');
  assert.type(t2.expires_at, 'number');
  assert.is.not(t2.access_token, first.access_token);
  assert.is.not(t2.refresh_token, first.refresh_token);
  assert.is(
    (await api('/namespaces', 'GET', undefined, bearer(t2.access_token))).status,
    200,
    'the new access token works',
  );

  isError(
    await auth('/auth/token', bearer(first.access_token), 'POST', { refresh_token: first.refresh_token }),
    401,
    'the old refresh token again',
  );
  isError(
    await auth('/auth/token', bearer(t2.access_token), 'POST', { refresh_token: first.refresh_token }),
    401,
    'the old refresh token with the new access token',
  );
  isError(
    await auth('/auth/token', {}, 'POST', { refresh_token: t2.refresh_token }),
    400,
    'refresh without a Bearer token',
  );
  isError(
    await auth('/auth/token', bearer('garbage'), 'POST', { refresh_token: t2.refresh_token }),
    400,
    'refresh with a garbage access token',
  );
  isError(
    await auth('/auth/token', bearer(t2.access_token), 'POST', {}),
    400,
    'refresh without refresh_token',
  );

  // The second pair still refreshes.
  const third = await auth('/auth/token', bearer(t2.access_token), 'POST', {
    refresh_token: t2.refresh_token,
  });
  assert.is(third.status, 200, `second refresh: ${JSON.stringify(third.body)}`);
});

test('tokens: /auth/logout ends the session: the access token is refused (401)', async () => {
  const { name, password } = await newUser(['cluster-admins']);
  const t = await login(name, password);
  assert.is(
    (await api('/namespaces', 'GET', undefined, bearer(t.access_token))).status,
    200,
    'before logout',
  );
  const out = await auth('/auth/logout', bearer(t.access_token), 'POST');
  assert.ok(out.status === 200 || out.status === 204, `logout: ${out.status} ${JSON.stringify(out.body)}`);
  isError(
    await api('/namespaces', 'GET', undefined, bearer(t.access_token)),
    401,
    'the access token after logout',
  );
  isError(
    await auth('/auth/token', bearer(t.access_token), 'POST', { refresh_token: t.refresh_token }),
    401,
    'the refresh token after logout',
  );
  isError(await auth('/auth/logout', bearer(t.access_token), 'POST'), 401, 'logout again');
  // Another session of the same user is untouched.
  const t2 = await login(name, password);
  assert.is(
    (await api('/namespaces', 'GET', undefined, bearer(t2.access_token))).status,
    200,
    'a new session',
  );
});

test.run();
