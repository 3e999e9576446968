// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { adminAuth, getJson, startBackend, type Backend } from '../harness/index.ts';
import { basic, bearer } from '../harness/api.ts';
import { defaultCells, extraCells, otherCells, report, runCells } from './rbac-matrix/matrix.ts';
import {
  expected,
  NAMESPACES,
  NS_FAMILIES,
  principal,
  PRINCIPALS,
  PW,
  who,
} from './rbac-matrix/principals.ts';
import { BODIES, brief, SEED } from './rbac-matrix/requests.ts';
import { must, seedObjects, seedUsers } from './rbac-matrix/seed.ts';

// RBAC over the REST API of one backend, against the seeded roles (docs/compatibility.md#rbac-and-seeds):
// users bound to cluster-admin (group cluster-admins), admin, edit and view (RoleBindings in
// `default`), view everywhere (a ClusterRoleBinding), edit through a Group subject, the admin's API
// key, and a user with no binding at all. The matrix role × verb × resource is generated from
// tables, and every wrong cell is collected before asserting, so one run shows all of them.
// The tables, the requests and the cells are in test/e2e/rbac-matrix/.

let backend: Backend;
/** API keys (of user `agent`) made by the administrator, one per principal, for the apikeys cells. */
const keyFor = new Map<string, string>();

const call = (auth: Record<string, string>, method: string, path: string, body?: object) =>
  getJson(backend.apiUrl + path, { method, headers: auth, body });
const asAdmin = (method: string, path: string, body?: object) => call(adminAuth, method, path, body);
const login = (user: string, password: string) =>
  getJson(`${backend.apiUrl}/auth`, { headers: basic(user, password) });

test.before(async () => {
  backend = await startBackend({ name: 'rbac-matrix', logLevel: 'info' });
});

test.after(async () => {
  await backend?.stop();
});

test('setup: users, bindings, namespace "other", seeded objects, tokens', async () => {
  await must(asAdmin('POST', '/api/core/v2/namespaces', { name: 'other' }), 'namespace other');
  await seedUsers(asAdmin);
  await seedObjects(asAdmin);
  for (const p of PRINCIPALS) {
    const r = await must(
      asAdmin('POST', '/api/core/v2/apikeys', { username: 'agent' }),
      `API key for ${p.tag}`,
    );
    const location = r.headers.get('location') ?? '';
    assert.match(location, /^\/api\/core\/v2\/apikeys\/[0-9a-f-]{36}$/, 'Location of the new key');
    keyFor.set(p.tag, location.split('/').pop()!);
  }
  for (const p of PRINCIPALS.filter((x) => x.user)) {
    const r = await must(login(p.user!, PW), `login of ${p.user}`, [200]);
    assert.type(r.body.access_token, 'string');
    p.auth = bearer(r.body.access_token);
  }
});

test('matrix in namespace "default" and for the cluster-wide resources', async () => {
  const cells = defaultCells(keyFor);
  const wrong = await runCells(call, cells);
  assert.ok(wrong.length === 0, report(wrong, cells.length));
});

test('matrix in namespace "other": namespace-bound principals are refused there', async () => {
  const cells = otherCells();
  const wrong = await runCells(call, cells);
  assert.ok(wrong.length === 0, report(wrong, cells.length));
});

test('the other routes (PATCH, sub-resources, actions) check the verb and resource of what they do', async () => {
  const cells = extraCells();
  const wrong = await runCells(call, cells);
  assert.ok(wrong.length === 0, report(wrong, cells.length));
});

test('all-namespaces lists hold only the namespaces the principal may list in', async () => {
  const wrong: string[] = [];
  let total = 0;
  const lists = [
    ...NS_FAMILIES.map((family) => ({ family, path: `/api/core/v2/${family}` })),
    { family: 'silenced', path: `/api/core/v2/silenced/checks/${SEED}` },
  ];
  for (const p of PRINCIPALS) {
    for (const { family, path } of lists) {
      total++;
      const want = NAMESPACES.filter((ns) => expected(p, family, 'list', ns));
      const r = await call(p.auth, 'GET', path);
      if (r.status === 403 && want.length === 0) continue;
      if (r.status !== 200 || !Array.isArray(r.body)) {
        wrong.push(`${who(p)} GET ${path}: want 200 with [${want}], got ${brief(r)}`);
        continue;
      }
      const nsOf = (i: any) =>
        i.metadata?.namespace ?? i.check?.metadata?.namespace ?? i.entity?.metadata?.namespace;
      const got = [...new Set(r.body.map(nsOf))].sort();
      if (JSON.stringify(got) !== JSON.stringify(want))
        wrong.push(`${who(p)} GET ${path}: want items of [${want}], got items of [${got}]`);
    }
  }
  assert.ok(wrong.length === 0, report(wrong, total));
});

test("every user reads itself and changes its own password, but not another user's", async () => {
  const wrong: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) wrong.push(what);
  };
  for (const p of PRINCIPALS.filter((x) => x.user)) {
    const self = p.user!;
    const clusterAdmin = p.role === 'cluster-admin';
    const me = await call(p.auth, 'GET', `/api/core/v2/users/${self}`);
    check(me.status === 200 && me.body?.username === self, `${self} GET itself: ${brief(me)}`);
    check(
      me.status !== 200 || (me.body.password === undefined && me.body.password_hash === undefined),
      `${self} GET itself shows a password: ${brief(me)}`,
    );

    const other = await call(p.auth, 'GET', '/api/core/v2/users/u-victim');
    check(
      clusterAdmin ? other.status === 200 : other.status === 403,
      `${self} GET another user: ${brief(other)}`,
    );

    const wrongCurrent = await call(p.auth, 'PUT', `/api/core/v2/users/${self}/change_password`, {
      username: self,
      password: 'not-my-password',
      password_new: 'never-set-123',
    });
    check(
      wrongCurrent.status >= 400 && wrongCurrent.status < 500,
      `${self} change_password with a wrong current password: ${brief(wrongCurrent)}`,
    );

    const newPw = `${self}-new-pass`;
    const changed = await call(p.auth, 'PUT', `/api/core/v2/users/${self}/change_password`, {
      username: self,
      password: PW,
      password_new: newPw,
    });
    check(
      changed.status >= 200 && changed.status < 300,
      `${self} change_password of itself: ${brief(changed)}`,
    );
    const withNew = await login(self, newPw);
    check(withNew.status === 200, `${self} logs in with the new password: ${brief(withNew)}`);
    const withOld = await login(self, PW);
    check(withOld.status === 401, `${self} logs in with the old password: ${brief(withOld)}`);
    if (withNew.status === 200) p.auth = bearer(withNew.body.access_token);

    if (!clusterAdmin) {
      const hijack = await call(p.auth, 'PUT', '/api/core/v2/users/u-victim/change_password', {
        username: 'u-victim',
        password: PW,
        password_new: 'hijacked-123',
      });
      check(hijack.status === 403, `${self} change_password of u-victim: ${brief(hijack)}`);
      const adminRoute = await call(p.auth, 'PUT', `/api/core/v2/users/${self}/password`, {
        username: self,
        password_new: 'via-admin-route-1',
      });
      check(
        adminRoute.status === 403,
        `${self} PUT its own /password (administrators only): ${brief(adminRoute)}`,
      );
      const promote = await call(p.auth, 'PUT', `/api/core/v2/users/${self}`, {
        username: self,
        password: newPw,
        groups: ['cluster-admins'],
      });
      check(promote.status === 403, `${self} PUT itself into cluster-admins: ${brief(promote)}`);
      const join = await call(p.auth, 'PUT', `/api/core/v2/users/${self}/groups/cluster-admins`);
      check(join.status === 403, `${self} adds itself to group cluster-admins: ${brief(join)}`);
    }
  }
  const victim = await login('u-victim', PW);
  check(victim.status === 200, `u-victim still logs in with its own password: ${brief(victim)}`);
  assert.ok(wrong.length === 0, `${wrong.length} wrong:\n  ${wrong.join('\n  ')}`);
});

test('a namespace admin binding itself to cluster-admin in its namespace gains nothing cluster-wide', async () => {
  const adm = principal('adm');
  const made = await call(adm.auth, 'POST', '/api/core/v2/namespaces/default/rolebindings', {
    metadata: { name: 'rb-escalate' },
    role_ref: { type: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ type: 'User', name: 'u-admin' }],
  });
  assert.ok(made.status === 201 || made.status === 403, `the binding: ${brief(made)}`);
  const wrong: string[] = [];
  for (const [method, path, body] of [
    ['GET', '/api/core/v2/users'],
    ['GET', '/api/core/v2/clusterroles'],
    ['GET', '/api/core/v2/apikeys'],
    ['POST', '/api/core/v2/namespaces', { name: 'escalated' }],
    ['GET', '/api/core/v2/namespaces/other/checks'],
    [
      'POST',
      '/api/core/v2/clusterrolebindings',
      {
        metadata: { name: 'escalated' },
        role_ref: { type: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ type: 'User', name: 'u-admin' }],
      },
    ],
  ] as Array<[string, string, object?]>) {
    const r = await call(adm.auth, method, path, body);
    if (r.status !== 403) wrong.push(`${method} ${path}: ${brief(r)}`);
  }
  if (made.status === 201)
    await must(
      asAdmin('DELETE', '/api/core/v2/namespaces/default/rolebindings/rb-escalate'),
      'remove rb-escalate',
    );
  assert.equal(wrong, [], `u-admin got past its namespace:\n  ${wrong.join('\n  ')}`);
});

test("a disabled user's token and API key stop working at once", async () => {
  await must(
    asAdmin('POST', '/api/core/v2/users', { username: 'u-temp', password: PW, groups: [] }),
    'user u-temp',
  );
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/default/rolebindings', {
      metadata: { name: 'rb-u-temp' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 'u-temp' }],
    }),
    'rolebinding u-temp',
  );
  const keyRes = await must(asAdmin('POST', '/api/core/v2/apikeys', { username: 'u-temp' }), 'key of u-temp');
  const key = { Authorization: `Key ${keyRes.headers.get('location')!.split('/').pop()}` };
  const tok = await must(login('u-temp', PW), 'login u-temp', [200]);
  const auth = bearer(tok.body.access_token);
  assert.is(
    (await call(auth, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    200,
    'token works before',
  );
  assert.is(
    (await call(key, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    200,
    'key works before',
  );

  assert.is((await asAdmin('DELETE', '/api/core/v2/users/u-temp')).status, 204, 'disable');
  const shown = await asAdmin('GET', '/api/core/v2/users/u-temp');
  assert.is(shown.body.disabled, true, 'the user shows as disabled');
  assert.is(
    (await call(auth, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    401,
    'the token of a disabled user',
  );
  assert.is(
    (await call(auth, 'GET', '/api/core/v2/users/u-temp')).status,
    401,
    'a disabled user cannot even read itself',
  );
  assert.is(
    (await call(key, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    401,
    'the API key of a disabled user',
  );
  assert.is((await login('u-temp', PW)).status, 401, 'a disabled user cannot log in');

  assert.is((await asAdmin('PUT', '/api/core/v2/users/u-temp/reinstate')).status, 201, 'reinstate');
  assert.is((await login('u-temp', PW)).status, 200, 'a reinstated user logs in');
});

test("Authorization: Key authenticates as the key's user; a bad key or none is a 401", async () => {
  const keyRes = await must(asAdmin('POST', '/api/core/v2/apikeys', { username: 'u-view' }), 'key of u-view');
  const viewKey = { Authorization: `Key ${keyRes.headers.get('location')!.split('/').pop()}` };
  assert.is(
    (await call(viewKey, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    200,
    'u-view key lists checks in default',
  );
  assert.is(
    (await call(viewKey, 'POST', '/api/core/v2/namespaces/default/checks', BODIES.checks!('by-view-key')))
      .status,
    403,
    'u-view key cannot create',
  );
  assert.is(
    (await call(viewKey, 'GET', '/api/core/v2/namespaces/other/checks')).status,
    403,
    'u-view key is bound to default only',
  );
  assert.is((await call(viewKey, 'GET', '/api/core/v2/users')).status, 403, 'u-view key cannot list users');
  // The administrator's key can do what the administrator can (the matrix ran it through every cell).
  assert.is((await call(adminAuth, 'GET', '/api/core/v2/users')).status, 200);
  assert.is(
    (
      await call(
        { Authorization: 'Key 00000000-0000-4000-8000-000000000000' },
        'GET',
        '/api/core/v2/namespaces',
      )
    ).status,
    401,
    'unknown key',
  );
  assert.is(
    (await call({ Authorization: 'Bearer not-a-jwt' }, 'GET', '/api/core/v2/namespaces')).status,
    401,
    'garbage token',
  );
  assert.is((await call({}, 'GET', '/api/core/v2/namespaces')).status, 401, 'no credentials');
  assert.is(
    (await call({}, 'GET', '/api/enterprise/authentication/v2/authproviders')).status,
    401,
    'no credentials on the providers API',
  );
});

test("Group subjects: bindings follow the user's groups, in RoleBindings and ClusterRoleBindings", async () => {
  const grp = principal('grp');
  assert.is(
    (await call(grp.auth, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    200,
    'team-x edits default',
  );
  // A Group subject in a ClusterRoleBinding.
  await must(
    asAdmin('POST', '/api/core/v2/users', {
      username: 'u-group-view',
      password: PW,
      groups: ['viewers-all'],
    }),
    'u-group-view',
  );
  await must(
    asAdmin('POST', '/api/core/v2/clusterrolebindings', {
      metadata: { name: 'crb-viewers-all' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'Group', name: 'viewers-all' }],
    }),
    'crb of group viewers-all',
  );
  const gv = bearer((await must(login('u-group-view', PW), 'login u-group-view', [200])).body.access_token);
  assert.is(
    (await call(gv, 'GET', '/api/core/v2/namespaces/other/checks')).status,
    200,
    'viewers-all lists in other',
  );
  assert.is(
    (await call(gv, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    200,
    'viewers-all lists in default',
  );
  assert.is(
    (await call(gv, 'POST', '/api/core/v2/namespaces/default/checks', BODIES.checks!('by-group-view')))
      .status,
    403,
    'viewers-all cannot create',
  );
  // Group membership is read at each request: leaving the group ends the access with the same token.
  assert.is(
    (await asAdmin('DELETE', '/api/core/v2/users/u-group-edit/groups/team-x')).status,
    204,
    'remove u-group-edit from team-x',
  );
  assert.is(
    (await call(grp.auth, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    403,
    'out of team-x: no access',
  );
  assert.is(
    (await asAdmin('PUT', '/api/core/v2/users/u-group-edit/groups/team-x')).status,
    201,
    'back into team-x',
  );
  assert.is(
    (await call(grp.auth, 'GET', '/api/core/v2/namespaces/default/checks')).status,
    200,
    'back in team-x: access again',
  );
});

test('a Role (not a ClusterRole) bound in a namespace grants only there', async () => {
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/other/roles', {
      metadata: { name: 'checks-reader' },
      rules: [{ verbs: ['get', 'list'], resources: ['checks'] }],
    }),
    'role checks-reader in other',
  );
  const binding = (name: string) => ({
    metadata: { name },
    role_ref: { type: 'Role', name: 'checks-reader' },
    subjects: [{ type: 'User', name: 'u-role' }],
  });
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/other/rolebindings', binding('rb-reader')),
    'rolebinding rb-reader in other',
  );
  // The same binding in default names a Role that does not exist in default: it grants nothing.
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/default/rolebindings', binding('rb-reader')),
    'rolebinding rb-reader in default',
  );
  const auth = bearer((await must(login('u-role', PW), 'login u-role', [200])).body.access_token);
  const status = async (method: string, path: string, body?: object) =>
    (await call(auth, method, path, body)).status;

  assert.is(await status('GET', '/api/core/v2/namespaces/other/checks'), 200, 'list checks in other');
  assert.is(await status('GET', `/api/core/v2/namespaces/other/checks/${SEED}`), 200, 'get a check in other');
  assert.is(
    await status('POST', '/api/core/v2/namespaces/other/checks', BODIES.checks!('by-role')),
    403,
    'create is not in the role',
  );
  assert.is(
    await status('GET', '/api/core/v2/namespaces/other/entities'),
    403,
    'entities are not in the role',
  );
  assert.is(
    await status('GET', '/api/core/v2/namespaces/default/checks'),
    403,
    'the role lives in other only',
  );
  assert.is(await status('GET', `/api/core/v2/namespaces/default/checks/${SEED}`), 403, 'get in default');
  const all = await call(auth, 'GET', '/api/core/v2/checks');
  assert.is(all.status, 200);
  assert.equal(
    [...new Set(all.body.map((c: any) => c.metadata.namespace))],
    ['other'],
    'the all-namespaces list shows other only',
  );

  // A Role of that name in default makes the binding in default effective.
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/default/roles', {
      metadata: { name: 'checks-reader' },
      rules: [{ verbs: ['list'], resources: ['checks'] }],
    }),
    'role checks-reader in default',
  );
  assert.is(
    await status('GET', '/api/core/v2/namespaces/default/checks'),
    200,
    'list in default through the default Role',
  );
  assert.is(
    await status('GET', `/api/core/v2/namespaces/default/checks/${SEED}`),
    403,
    'the default Role has no get',
  );
  // Deleting the binding in other ends the access there.
  assert.is((await asAdmin('DELETE', '/api/core/v2/namespaces/other/rolebindings/rb-reader')).status, 204);
  assert.is(await status('GET', '/api/core/v2/namespaces/other/checks'), 403, 'binding deleted');
});

test.run();
