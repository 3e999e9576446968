// suite-timeout: 200
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  adminAuth,
  getJson,
  startBackend,
  waitFor,
  type Backend,
  type JsonResponse,
} from '../harness/index.ts';
import { basic, bearer, isError } from '../harness/api.ts';
import { bare, legacyApi } from '../harness/legacy.ts';

// The legacy views on the API port (`/api/legacy/*`, docs/compatibility.md#the-legacy-views-on-the-api-port),
// over plain HTTP: the REST API's authentication instead of the legacy API's own credentials, the
// RBAC table (each legacy route mapped to core/v2 verbs and resources), the legacy port's exact
// answers, the routes left out, and a node whose legacy API is off.

let backend: Backend;
let off: Backend | undefined;
const LEGACY_AUTH = basic('legacy-user', 'legacy-pass');
const legacy = legacyApi(() => backend, LEGACY_AUTH);
const PW = 'P@ssw0rd!views';
/** Bearer headers of the suite's users, by name. */
const auth = new Map<string, Record<string, string>>();

const asAdmin = (method: string, path: string, body?: object) =>
  getJson(`${backend.apiUrl}${path}`, { method, headers: adminAuth, body });
const must = async (r: Promise<JsonResponse>, what: string) => {
  const res = await r;
  assert.ok([200, 201, 202, 204].includes(res.status), `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
};
/** A call to the legacy views as `who` (a user of the suite, or `admin` with its API key). */
const view = (who: string, method: string, path: string) =>
  getJson(`${backend.apiUrl}/api/legacy${path}`, {
    method,
    headers: who === 'admin' ? adminAuth : auth.get(who),
  });

const CLIENT = 'view-client-1';
const DOOMED = 'view-client-2';
const AGG = 'view-agg';

test.before(async () => {
  backend = await startBackend({
    name: 'dash-legacy-proxy',
    logLevel: 'info',
    extraArgs: ['--legacy-api-user', 'legacy-user', '--legacy-api-password', 'legacy-pass'],
  });
  await waitFor(async () => (await asAdmin('GET', '/api/core/v2/namespaces')).status === 200, {
    timeoutMs: 10_000,
    what: 'the admin API key to work',
  });
  await must(asAdmin('POST', '/api/core/v2/namespaces', { name: 'other' }), 'namespace other');
  await must(
    asAdmin('POST', '/api/core/v2/clusterroles', {
      metadata: { name: 'stash-reader' },
      rules: [{ verbs: ['get', 'list'], resources: ['stashes'] }],
    }),
    'cluster role stash-reader',
  );
  await must(
    asAdmin('POST', '/api/core/v2/clusterroles', {
      metadata: { name: 'one-stash-deleter' },
      rules: [{ verbs: ['delete'], resources: ['stashes'], resource_names: ['keep/deletable'] }],
    }),
    'cluster role one-stash-deleter',
  );
  const bindings: Array<[string, string, string | undefined]> = [
    // [user, cluster role, namespace of a RoleBinding (undefined: a ClusterRoleBinding)]
    ['u-view', 'view', undefined],
    ['u-other', 'view', 'other'],
    ['u-edit', 'edit', 'default'],
    ['u-stash', 'stash-reader', undefined],
    ['u-stash-ns', 'stash-reader', 'default'],
    ['u-one-stash', 'one-stash-deleter', undefined],
  ];
  for (const user of ['u-none', ...bindings.map(([u]) => u)])
    await must(asAdmin('POST', '/api/core/v2/users', { username: user, password: PW }), `user ${user}`);
  for (const [user, role, ns] of bindings) {
    const body = {
      metadata: { name: `b-${user}` },
      role_ref: { type: 'ClusterRole', name: role },
      subjects: [{ type: 'User', name: user }],
    };
    const path = ns ? `/api/core/v2/namespaces/${ns}/rolebindings` : '/api/core/v2/clusterrolebindings';
    await must(asAdmin('POST', path, body), `binding of ${user}`);
  }
  for (const user of ['u-none', ...bindings.map(([u]) => u)]) {
    const r = await getJson(`${backend.apiUrl}/auth`, { headers: basic(user, PW) });
    assert.is(r.status, 200, `login of ${user}`);
    auth.set(user, bearer(r.body.access_token));
  }
  for (const name of [CLIENT, DOOMED])
    await must(
      asAdmin('POST', '/api/core/v2/namespaces/default/entities', {
        metadata: { name, namespace: 'default' },
        entity_class: 'proxy',
        subscriptions: ['web'],
      }),
      `entity ${name}`,
    );
  for (const [client, status] of [
    [CLIENT, 0],
    [DOOMED, 2],
  ] as const)
    assert.is(
      (
        await legacy('/results', 'POST', {
          name: 'http',
          output: 'x',
          status,
          source: client,
          aggregate: AGG,
        })
      ).status,
      202,
    );
  for (const path of ['keep/one', 'keep/deletable', 'silence/web-01'])
    assert.is((await legacy('/stashes', 'POST', { path, content: { reason: path } })).status, 201);
  await waitFor(
    async () => {
      const [clients, agg, stashes] = await Promise.all([
        legacy<any[]>('/clients'),
        legacy<any>(`/aggregates/${AGG}`),
        legacy<any[]>('/stashes'),
      ]);
      return (
        clients.body.length >= 2 &&
        agg.status === 200 &&
        agg.body.results.total === 2 &&
        stashes.body.length === 3
      );
    },
    { timeoutMs: 10_000, what: 'the clients, the aggregate and the stashes listed' },
  );
});

test.after(async () => {
  await off?.stop();
  await backend?.stop();
});

test('GET /api/legacy needs a token or an API key (401 otherwise, the legacy Basic credentials too) and says the API is on', async () => {
  for (const headers of [{}, LEGACY_AUTH, basic('u-view', PW), { Authorization: 'Bearer nonsense' }]) {
    const r = await getJson(`${backend.apiUrl}/api/legacy`, { headers });
    isError(r, 401, `GET /api/legacy with ${JSON.stringify(headers)}`);
    isError(
      await getJson(`${backend.apiUrl}/api/legacy/clients`, { headers }),
      401,
      `GET /api/legacy/clients with ${JSON.stringify(headers)}`,
    );
  }
  assert.equal((await view('admin', 'GET', '')).body, { enabled: true, namespace: 'default' });
  // Any signed-in user may ask whether it is on, whatever its roles.
  assert.equal((await view('u-none', 'GET', '')).body, { enabled: true, namespace: 'default' });
});

test("the views answer the legacy port's own bodies and headers: lists, one item, pagination, filters, a bare 404", async () => {
  for (const path of [
    '/clients',
    `/clients/${CLIENT}`,
    `/clients/${CLIENT}/history`,
    '/aggregates',
    `/aggregates/${AGG}`,
    `/aggregates/${AGG}?max_age=1`,
    `/aggregates/${AGG}/clients`,
    `/aggregates/${AGG}/checks`,
    `/aggregates/${AGG}/results/critical`,
    '/stash/keep%2Fone',
    '/stashes/keep/one',
    '/clients?filter.name=' + CLIENT,
  ]) {
    const [mine, theirs] = await Promise.all([view('admin', 'GET', path), legacy(path)]);
    assert.is(mine.status, 200, `${path}: ${mine.status} ${JSON.stringify(mine.body)}`);
    assert.equal(mine.body, theirs.body, path);
    assert.is(mine.headers.get('content-type'), theirs.headers.get('content-type'), path);
  }
  const stashes = await view('admin', 'GET', '/stashes');
  assert.equal(
    (stashes.body as any[]).map((s) => [s.path, s.content, s.expire]),
    [
      ['keep/deletable', { reason: 'keep/deletable' }, -1],
      ['keep/one', { reason: 'keep/one' }, -1],
      ['silence/web-01', { reason: 'silence/web-01' }, -1],
    ],
  );
  const paged = await view('admin', 'GET', '/stashes?limit=1&offset=1');
  assert.equal(JSON.parse(paged.headers.get('x-pagination')!), { limit: 1, offset: 1, total: 3 });
  assert.is(paged.body[0].path, 'keep/one');
  bare(await view('admin', 'GET', '/clients/no-such-client'), 404, 'an unknown client');
  bare(await view('admin', 'GET', '/aggregates/no-such-aggregate'), 404, 'an unknown aggregate');
  bare(await view('admin', 'GET', '/stashes/no/such/stash'), 404, 'an unknown stash');
  bare(await view('admin', 'GET', `/aggregates/${AGG}/results/nonsense`), 400, 'a severity that is none');
});

/** [user, method, legacy path, status expected]: the RBAC table, row by row. */
const CELLS: Array<[string, string, string, number]> = [
  // clients: entities of the legacy namespace (default)
  ['u-none', 'GET', '/clients', 403],
  ['u-view', 'GET', '/clients', 200],
  ['u-other', 'GET', '/clients', 403],
  ['u-edit', 'GET', '/clients', 200],
  ['u-stash', 'GET', '/clients', 403],
  ['u-none', 'GET', `/clients/${CLIENT}`, 403],
  ['u-view', 'GET', `/clients/${CLIENT}`, 200],
  ['u-other', 'GET', `/clients/${CLIENT}`, 403],
  ['u-view', 'GET', `/clients/${CLIENT}/history`, 200],
  ['u-none', 'GET', `/clients/${CLIENT}/history`, 403],
  ['u-view', 'DELETE', `/clients/${CLIENT}`, 403],
  ['u-other', 'DELETE', `/clients/${CLIENT}`, 403],
  ['u-stash', 'DELETE', `/clients/${CLIENT}`, 403],
  // aggregates: events and checks of the legacy namespace
  ['u-none', 'GET', '/aggregates', 403],
  ['u-view', 'GET', '/aggregates', 200],
  ['u-other', 'GET', '/aggregates', 403],
  ['u-stash', 'GET', `/aggregates/${AGG}`, 403],
  ['u-view', 'GET', `/aggregates/${AGG}`, 200],
  ['u-view', 'GET', `/aggregates/${AGG}/results/ok`, 200],
  ['u-none', 'GET', `/aggregates/${AGG}/clients`, 403],
  ['u-view', 'DELETE', `/aggregates/${AGG}`, 403],
  ['u-none', 'DELETE', `/aggregates/${AGG}`, 403],
  // stashes: the cluster-wide resource `stashes`, granted by ClusterRoleBindings only
  ['u-none', 'GET', '/stashes', 403],
  ['u-view', 'GET', '/stashes', 403],
  ['u-edit', 'GET', '/stashes', 403],
  ['u-stash', 'GET', '/stashes', 200],
  ['u-stash-ns', 'GET', '/stashes', 403],
  ['u-stash', 'GET', '/stashes/keep/one', 200],
  ['u-view', 'GET', '/stashes/keep/one', 403],
  ['u-stash', 'DELETE', '/stashes/keep/one', 403],
  ['u-edit', 'DELETE', '/stashes/keep/one', 403],
  ['u-one-stash', 'DELETE', '/stashes/keep/one', 403],
  ['u-one-stash', 'GET', '/stashes', 403],
];

test('RBAC: each legacy route needs its verb and resource; without them a 403 {message, code} says what is missing', async () => {
  const wrong: string[] = [];
  for (const [who, method, path, want] of CELLS) {
    const r = await view(who, method, path);
    if (r.status !== want)
      wrong.push(`${who} ${method} ${path}: ${r.status} (want ${want}) ${JSON.stringify(r.body)}`);
    else if (want === 403) isError(r, 403, `${who} ${method} ${path}`);
  }
  assert.equal(wrong, []);
  const r = await view('u-none', 'GET', '/clients');
  assert.is(r.body.message, 'user "u-none" may not list entities in namespace "default"');
  assert.is((await view('u-view', 'GET', '/stashes')).body.message, 'user "u-view" may not list stashes');
  assert.is(
    (await view('u-view', 'DELETE', `/aggregates/${AGG}`)).body.message,
    'user "u-view" may not delete events in namespace "default"',
  );
});

test('deletes go through with the right role: a stash by its name (204), a client (202 {issued}), an aggregate (204)', async () => {
  bare(await view('u-one-stash', 'DELETE', '/stashes/keep/deletable'), 204, 'the deletable stash');
  bare(await view('u-one-stash', 'DELETE', '/stashes/keep/deletable'), 404, 'the same stash again');
  const d = await view('u-edit', 'DELETE', `/clients/${DOOMED}`);
  assert.is(d.status, 202, JSON.stringify(d.body));
  assert.equal(Object.keys(d.body), ['issued']);
  await waitFor(async () => (await legacy(`/clients/${DOOMED}`)).status === 404, {
    timeoutMs: 10_000,
    what: 'the deleted client gone from the legacy port',
  });
  bare(await view('admin', 'DELETE', `/aggregates/${AGG}`), 204, 'the aggregate');
  bare(await legacy(`/aggregates/${AGG}`), 404, 'the deleted aggregate on the legacy port');
});

test('routes outside the table are not served (404 {message, code}): writes, events, results, checks, settings', async () => {
  for (const [method, path] of [
    ['POST', '/results'],
    ['POST', '/request'],
    ['GET', '/events'],
    ['GET', '/results'],
    ['GET', '/checks'],
    ['GET', '/silenced'],
    ['GET', '/settings'],
    ['GET', '/info'],
    ['GET', '/health'],
    ['GET', '/clients/bad%20name'],
    ['GET', '/'],
  ] as const) {
    const r = await view('admin', method, path);
    isError(r, 404, `${method} ${path}`);
    assert.match(r.body.message, /the legacy views do not serve/);
  }
  // A path the table serves under other methods: 405 naming them (docs/compatibility.md#rest-edges).
  for (const [method, path, allow] of [
    ['POST', '/stashes', 'GET, HEAD'],
    ['POST', '/clients', 'GET, HEAD'],
    ['DELETE', '/stashes', 'GET, HEAD'],
    ['POST', '/stashes/a/b', 'GET, HEAD, DELETE'],
  ] as const) {
    const r = await view('admin', method, path);
    isError(r, 405, `${method} ${path}`);
    assert.is(r.headers.get('Allow'), allow, `${method} ${path}`);
  }
});

test('a node whose legacy API is off: GET /api/legacy says so, and each view is a 404 naming the flag', async () => {
  off = await startBackend({ name: 'dash-legacy-off', legacyPort: 0, logLevel: 'info' });
  const r = await waitFor(
    async () => {
      const res = await getJson(`${off!.apiUrl}/api/legacy`, { headers: adminAuth });
      return res.status === 200 ? res : undefined;
    },
    { timeoutMs: 10_000, what: 'GET /api/legacy on the node without a legacy API' },
  );
  assert.equal(r.body, { enabled: false });
  const clients = await getJson(`${off.apiUrl}/api/legacy/clients`, { headers: adminAuth });
  isError(clients, 404, 'the clients of a node without a legacy API');
  assert.match(clients.body.message, /the legacy API is off on this node \(--legacy-api-port is 0\)/);
});

test.run();
