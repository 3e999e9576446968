// suite-timeout: 240
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adminAuth, getJson, loud, startBackend, type Backend, type JsonResponse } from '../harness/index.ts';

// RBAC over the REST API of one backend, against the seeded roles (docs/compatibility.md#rbac-and-seeds):
// users bound to cluster-admin (group cluster-admins), admin, edit and view (RoleBindings in
// `default`), view everywhere (a ClusterRoleBinding), edit through a Group subject, the admin's API
// key, and a user with no binding at all. The matrix role × verb × resource is generated from
// tables, and every wrong cell is collected before asserting, so one run shows all of them.

type Verb = 'get' | 'list' | 'create' | 'update' | 'delete';
/** Execution order: what `create` makes, `update` replaces and `delete` removes. */
const VERBS: Verb[] = ['create', 'get', 'list', 'update', 'delete'];
const COMMON = [
  'assets',
  'checks',
  'entities',
  'events',
  'filters',
  'handlers',
  'hooks',
  'mutators',
  'silenced',
  'pipelines',
];
const NS_FAMILIES = [...COMMON, 'roles', 'rolebindings'];
const CLUSTER_FAMILIES = [
  'namespaces',
  'users',
  'clusterroles',
  'clusterrolebindings',
  'apikeys',
  'authproviders',
];
const NAMESPACES = ['default', 'other'];

// The seeded cluster roles as the reference describes them (written out here, not read from the product).
type Rule = { verbs: Verb[] | '*'; resources: string[] | '*' };
const SEEDED: Record<string, Rule[]> = {
  'cluster-admin': [{ verbs: '*', resources: '*' }],
  admin: [
    { verbs: '*', resources: [...COMMON, 'roles', 'rolebindings'] },
    { verbs: ['get', 'list'], resources: ['namespaces'] },
  ],
  edit: [
    { verbs: '*', resources: COMMON },
    { verbs: ['get', 'list'], resources: ['namespaces'] },
  ],
  view: [{ verbs: ['get', 'list'], resources: [...COMMON, 'namespaces'] }],
  none: [],
};
const rulesAllow = (rules: Rule[], verb: Verb, resource: string) =>
  rules.some(
    (r) =>
      (r.verbs === '*' || r.verbs.includes(verb)) && (r.resources === '*' || r.resources.includes(resource)),
  );

interface Principal {
  /** Short tag used in the names of the objects it creates. */
  tag: string;
  /** Its user; absent for the administrator's API key. */
  user?: string;
  groups?: string[];
  role: keyof typeof SEEDED;
  /** Where its binding applies: everywhere (ClusterRoleBinding) or these namespaces (RoleBindings). */
  scope: 'all' | string[];
  auth: Record<string, string>;
}

const PRINCIPALS: Principal[] = [
  {
    tag: 'ca',
    user: 'u-cluster-admin',
    groups: ['cluster-admins'],
    role: 'cluster-admin',
    scope: 'all',
    auth: {},
  },
  { tag: 'key', role: 'cluster-admin', scope: 'all', auth: adminAuth },
  { tag: 'adm', user: 'u-admin', role: 'admin', scope: ['default'], auth: {} },
  { tag: 'ed', user: 'u-edit', role: 'edit', scope: ['default'], auth: {} },
  { tag: 'vw', user: 'u-view', role: 'view', scope: ['default'], auth: {} },
  { tag: 'cvw', user: 'u-cluster-view', role: 'view', scope: 'all', auth: {} },
  { tag: 'grp', user: 'u-group-edit', groups: ['team-x'], role: 'edit', scope: ['default'], auth: {} },
  { tag: 'none', user: 'u-none', role: 'none', scope: [], auth: {} },
];
const who = (p: Principal) => p.user ?? 'admin API key';
const principal = (tag: string) => PRINCIPALS.find((p) => p.tag === tag)!;

/** What the seeded roles say: `ns` is the namespace the request is about (undefined: cluster-wide). */
function expected(p: Principal, resource: string, verb: Verb, ns: string | undefined): boolean {
  if (!rulesAllow(SEEDED[p.role]!, verb, resource)) return false;
  if (p.scope === 'all') return true;
  return ns !== undefined && p.scope.includes(ns);
}

const PW = 'rbac-pass-123';
const SEED = 'rbac-seed';
let backend: Backend;
/** API keys (of user `agent`) made by the administrator, one per principal, for the apikeys cells. */
const keyFor = new Map<string, string>();

interface Req {
  method: string;
  path: string;
  body?: object;
  /** Lists that filter rather than refuse: does the answer show what the principal may see? */
  visible?: (body: any) => boolean;
}

const call = (auth: Record<string, string>, method: string, path: string, body?: object) =>
  getJson(backend.apiUrl + path, { method, headers: auth, body });
const asAdmin = (method: string, path: string, body?: object) => call(adminAuth, method, path, body);
const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const login = (user: string, password: string) =>
  getJson(`${backend.apiUrl}/auth`, { headers: basic(user, password) });
const brief = (r: JsonResponse) =>
  `${r.status} ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`.slice(0, 240);

async function must(res: Promise<JsonResponse>, what: string, ok = [200, 201, 204]): Promise<JsonResponse> {
  const r = await res;
  if (!ok.includes(r.status)) throw new Error(`${what}: HTTP ${brief(r)}`);
  return r;
}

/** Valid bodies of the namespaced configuration resources. */
const BODIES: Record<string, (name: string) => Record<string, unknown>> = {
  assets: (name) => ({ metadata: { name }, url: 'http://127.0.0.1:1/asset.tar.gz', sha512: 'a'.repeat(128) }),
  checks: (name) => ({ metadata: { name }, command: 'true', publish: false, subscriptions: ['rbac'] }),
  entities: (name) => ({ metadata: { name }, entity_class: 'proxy', subscriptions: ['rbac'] }),
  filters: (name) => ({ metadata: { name }, action: 'allow', expressions: ['event.check.status == 0'] }),
  handlers: (name) => ({ metadata: { name }, type: 'pipe', command: 'true' }),
  hooks: (name) => ({ metadata: { name }, command: 'true' }),
  mutators: (name) => ({ metadata: { name }, type: 'pipe', command: 'cat' }),
  pipelines: (name) => ({
    metadata: { name },
    workflows: [{ name: 'w', handler: { name: 'h', type: 'Handler', api_version: 'core/v2' } }],
  }),
  roles: (name) => ({ metadata: { name }, rules: [{ verbs: ['get'], resources: ['assets'] }] }),
  rolebindings: (name) => ({
    metadata: { name },
    role_ref: { type: 'Role', name: SEED },
    subjects: [{ type: 'User', name: 'nobody' }],
  }),
};
const eventBody = (entity: string, check: string) => ({
  entity: { metadata: { name: entity }, entity_class: 'proxy' },
  check: { metadata: { name: check }, status: 0, output: 'ok', interval: 60 },
});
const ldapBody = (name: string) => ({
  type: 'ldap',
  api_version: 'authentication/v2',
  metadata: { name },
  spec: {
    servers: [
      {
        host: '127.0.0.1',
        port: 1,
        security: 'insecure',
        binding: { user_dn: 'cn=binder,dc=example,dc=org', password: 'secret' },
        group_search: { base_dn: 'dc=example,dc=org' },
        user_search: { base_dn: 'dc=example,dc=org' },
      },
    ],
  },
});

/** The five requests of a namespaced family in `ns`: get/list read the seeded object, the others a principal's own. */
function nsRequests(family: string, ns: string, tag: string): Record<Verb, Req> {
  const base = `/api/core/v2/namespaces/${ns}/${family}`;
  if (family === 'events') {
    const mine = `${base}/m-${tag}-evt/m-check`;
    return {
      create: { method: 'POST', path: base, body: eventBody(`m-${tag}-evt`, 'm-check') },
      get: { method: 'GET', path: `${base}/${SEED}-ent/${SEED}` },
      list: { method: 'GET', path: base },
      update: { method: 'PUT', path: mine, body: eventBody(`m-${tag}-evt`, 'm-check') },
      delete: { method: 'DELETE', path: mine },
    };
  }
  if (family === 'silenced') {
    const body = { subscription: `m-${tag}`, check: 'x', reason: 'rbac' };
    return {
      create: { method: 'POST', path: base, body },
      get: { method: 'GET', path: `${base}/${SEED}:${SEED}` },
      list: { method: 'GET', path: base },
      update: { method: 'PUT', path: `${base}/m-${tag}:x`, body },
      delete: { method: 'DELETE', path: `${base}/m-${tag}:x` },
    };
  }
  const name = `m-${tag}-${family}`;
  return {
    create: { method: 'POST', path: base, body: BODIES[family]!(name) },
    get: { method: 'GET', path: `${base}/${SEED}` },
    list: { method: 'GET', path: base },
    update: { method: 'PUT', path: `${base}/${name}`, body: BODIES[family]!(name) },
    delete: { method: 'DELETE', path: `${base}/${name}` },
  };
}

/** The requests of a cluster-wide family; `namespaces` get/list are about namespace `ns`. */
function clusterRequests(family: string, tag: string, ns = 'default'): Partial<Record<Verb, Req>> {
  const core = '/api/core/v2';
  switch (family) {
    case 'namespaces': {
      const name = `m-${tag}-ns`;
      return {
        create: { method: 'POST', path: `${core}/namespaces`, body: { name } },
        get: { method: 'GET', path: `${core}/namespaces/${ns}` },
        list: {
          method: 'GET',
          path: `${core}/namespaces`,
          visible: (b) => Array.isArray(b) && b.some((n: { name?: string }) => n.name === ns),
        },
        update: { method: 'PUT', path: `${core}/namespaces/${name}`, body: { name } },
        delete: { method: 'DELETE', path: `${core}/namespaces/${name}` },
      };
    }
    case 'users': {
      const name = `m-${tag}-user`;
      return {
        create: { method: 'POST', path: `${core}/users`, body: { username: name, password: PW, groups: [] } },
        get: { method: 'GET', path: `${core}/users/agent` },
        list: { method: 'GET', path: `${core}/users` },
        update: {
          method: 'PUT',
          path: `${core}/users/${name}`,
          body: { username: name, password: PW, groups: [] },
        },
        delete: { method: 'DELETE', path: `${core}/users/${name}` },
      };
    }
    case 'clusterroles': {
      const name = `m-${tag}-cr`;
      const body = { metadata: { name }, rules: [{ verbs: ['get'], resources: ['assets'] }] };
      return {
        create: { method: 'POST', path: `${core}/clusterroles`, body },
        get: { method: 'GET', path: `${core}/clusterroles/view` },
        list: { method: 'GET', path: `${core}/clusterroles` },
        update: { method: 'PUT', path: `${core}/clusterroles/${name}`, body },
        delete: { method: 'DELETE', path: `${core}/clusterroles/${name}` },
      };
    }
    case 'clusterrolebindings': {
      const name = `m-${tag}-crb`;
      const body = {
        metadata: { name },
        role_ref: { type: 'ClusterRole', name: 'view' },
        subjects: [{ type: 'User', name: 'nobody' }],
      };
      return {
        create: { method: 'POST', path: `${core}/clusterrolebindings`, body },
        get: { method: 'GET', path: `${core}/clusterrolebindings/cluster-admin` },
        list: { method: 'GET', path: `${core}/clusterrolebindings` },
        update: { method: 'PUT', path: `${core}/clusterrolebindings/${name}`, body },
        delete: { method: 'DELETE', path: `${core}/clusterrolebindings/${name}` },
      };
    }
    case 'apikeys': {
      const key = keyFor.get(tag)!;
      return {
        create: { method: 'POST', path: `${core}/apikeys`, body: { username: 'agent' } },
        get: { method: 'GET', path: `${core}/apikeys/${key}` },
        list: { method: 'GET', path: `${core}/apikeys` },
        update: { method: 'PATCH', path: `${core}/apikeys/${key}`, body: { username: 'agent' } },
        delete: { method: 'DELETE', path: `${core}/apikeys/${key}` },
      };
    }
    case 'authproviders': {
      // No create route: providers are created and replaced with PUT (the update verb).
      const base = '/api/enterprise/authentication/v2/authproviders';
      const name = `m-${tag}-ldap`;
      return {
        get: { method: 'GET', path: `${base}/no-such-provider` },
        list: { method: 'GET', path: base },
        update: { method: 'PUT', path: `${base}/${name}`, body: ldapBody(name) },
        delete: { method: 'DELETE', path: `${base}/${name}` },
      };
    }
    default:
      throw new Error(`unknown family ${family}`);
  }
}

/** allowed (2xx, or 404 of a real route), denied (403), or a description of anything else. */
function outcome(res: JsonResponse, req: Req): string {
  if (res.status === 403) return 'denied';
  if (req.visible && res.status === 200) return req.visible(res.body) ? 'allowed' : 'denied';
  if (res.status === 404 && /no route/.test(String(res.body?.message))) return `no route (${brief(res)})`;
  if ((res.status >= 200 && res.status < 300) || res.status === 404) return 'allowed';
  return `HTTP ${brief(res)}`;
}

interface Cell {
  p: Principal;
  family: string;
  verb: Verb;
  ns: string | undefined;
  req: Req;
}

/** Runs the cells in order and returns one line per cell whose answer differs from the seeded roles. */
async function runCells(cells: Cell[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const c of cells) {
    const res = await call(c.p.auth, c.req.method, c.req.path, c.req.body);
    const got = outcome(res, c.req);
    const want = expected(c.p, c.family, c.verb, c.ns) ? 'allowed' : 'denied';
    if (got !== want)
      wrong.push(
        `${who(c.p)} ${c.verb} ${c.family}${c.ns ? ` in ${c.ns}` : ''}: want ${want}, got ${got} [${c.req.method} ${c.req.path} -> ${brief(res)}]`,
      );
  }
  return wrong;
}

/** Every other route, with the resource and verb it is about: PATCH, sub-resources, actions. */
function extraRequests(tag: string): Array<{ family: string; verb: Verb; ns?: string; req: Req }> {
  const core = '/api/core/v2';
  const d = `${core}/namespaces/default`;
  const label = { metadata: { labels: { patched_by: tag } } };
  const patches = NS_FAMILIES.filter((f) => f !== 'events').map((family) => ({
    family,
    verb: 'update' as Verb,
    ns: 'default',
    req: {
      method: 'PATCH',
      path: `${d}/${family}/${family === 'silenced' ? `${SEED}:${SEED}` : SEED}`,
      body: label,
    },
  }));
  return [
    ...patches,
    {
      family: 'clusterroles',
      verb: 'update',
      req: { method: 'PATCH', path: `${core}/clusterroles/${SEED}`, body: label },
    },
    {
      family: 'clusterrolebindings',
      verb: 'update',
      req: { method: 'PATCH', path: `${core}/clusterrolebindings/${SEED}`, body: label },
    },
    {
      family: 'events',
      verb: 'list',
      ns: 'default',
      req: { method: 'GET', path: `${d}/events/${SEED}-ent` },
    },
    {
      family: 'silenced',
      verb: 'list',
      ns: 'default',
      req: { method: 'GET', path: `${d}/silenced/subscriptions/${SEED}` },
    },
    {
      family: 'silenced',
      verb: 'list',
      ns: 'default',
      req: { method: 'GET', path: `${d}/silenced/checks/${SEED}` },
    },
    {
      family: 'checks',
      verb: 'update',
      ns: 'default',
      req: { method: 'PUT', path: `${d}/checks/${SEED}/hooks/critical`, body: { hooks: [SEED] } },
    },
    {
      family: 'checks',
      verb: 'update',
      ns: 'default',
      req: { method: 'DELETE', path: `${d}/checks/${SEED}/hooks/critical/hook/${SEED}` },
    },
    {
      family: 'checks',
      verb: 'create',
      ns: 'default',
      req: { method: 'POST', path: `${d}/checks/${SEED}/execute`, body: { reason: `rbac ${tag}` } },
    },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'PUT', path: `${core}/users/u-victim/password`, body: { password_new: PW } },
    },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'PUT', path: `${core}/users/u-victim/reset_password`, body: { password_new: PW } },
    },
    { family: 'users', verb: 'update', req: { method: 'PUT', path: `${core}/users/u-victim/reinstate` } },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'PUT', path: `${core}/users/u-victim/groups/g-${tag}` },
    },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'DELETE', path: `${core}/users/u-victim/groups/g-${tag}` },
    },
    { family: 'users', verb: 'update', req: { method: 'DELETE', path: `${core}/users/u-victim/groups` } },
    {
      family: 'authproviders',
      verb: 'delete',
      req: { method: 'DELETE', path: `${d}/authproviders/no-such-provider` },
    },
  ];
}

const report = (wrong: string[], total: number) =>
  `${wrong.length} of ${total} cells wrong:\n  ${wrong.join('\n  ')}`;

test.before(
  loud(async () => {
    backend = await startBackend({ name: 'rbac-matrix', logLevel: 'info' });
  }),
);

test.after(async () => {
  await backend?.stop();
});

test('setup: users, bindings, namespace "other", seeded objects, tokens', async () => {
  await must(asAdmin('POST', '/api/core/v2/namespaces', { name: 'other' }), 'namespace other');
  const users = [
    ...PRINCIPALS.filter((p) => p.user).map((p) => ({ username: p.user!, groups: p.groups ?? [] })),
    { username: 'u-victim', groups: [] },
    { username: 'u-role', groups: [] },
  ];
  for (const u of users) {
    await must(asAdmin('POST', '/api/core/v2/users', { ...u, password: PW }), `user ${u.username}`);
  }
  for (const role of ['admin', 'edit', 'view']) {
    await must(
      asAdmin('POST', '/api/core/v2/namespaces/default/rolebindings', {
        metadata: { name: `rb-u-${role}` },
        role_ref: { type: 'ClusterRole', name: role },
        subjects: [{ type: 'User', name: `u-${role}` }],
      }),
      `rolebinding u-${role}`,
    );
  }
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/default/rolebindings', {
      metadata: { name: 'rb-team-x' },
      role_ref: { type: 'ClusterRole', name: 'edit' },
      subjects: [{ type: 'Group', name: 'team-x' }],
    }),
    'rolebinding of group team-x',
  );
  await must(
    asAdmin('POST', '/api/core/v2/clusterrolebindings', {
      metadata: { name: 'crb-u-cluster-view' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 'u-cluster-view' }],
    }),
    'clusterrolebinding of u-cluster-view',
  );

  // One object of every namespaced family in both namespaces, for get and the lists.
  for (const ns of NAMESPACES) {
    for (const family of NS_FAMILIES) {
      const base = `/api/core/v2/namespaces/${ns}/${family}`;
      if (family === 'events')
        await must(asAdmin('POST', base, eventBody(`${SEED}-ent`, SEED)), `seed event in ${ns}`);
      else if (family === 'silenced')
        await must(asAdmin('POST', base, { subscription: SEED, check: SEED }), `seed silenced in ${ns}`);
      else await must(asAdmin('POST', base, BODIES[family]!(SEED)), `seed ${family} in ${ns}`);
    }
  }
  await must(
    asAdmin('POST', '/api/core/v2/clusterroles', {
      metadata: { name: SEED },
      rules: [{ verbs: ['get'], resources: ['assets'] }],
    }),
    'seed clusterrole',
  );
  await must(
    asAdmin('POST', '/api/core/v2/clusterrolebindings', {
      metadata: { name: SEED },
      role_ref: { type: 'ClusterRole', name: SEED },
      subjects: [{ type: 'User', name: 'nobody' }],
    }),
    'seed clusterrolebinding',
  );
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
  const cells: Cell[] = [];
  for (const p of PRINCIPALS) {
    for (const family of NS_FAMILIES) {
      const reqs = nsRequests(family, 'default', p.tag);
      for (const verb of VERBS) cells.push({ p, family, verb, ns: 'default', req: reqs[verb] });
    }
    for (const family of CLUSTER_FAMILIES) {
      const reqs = clusterRequests(family, p.tag);
      for (const verb of VERBS) {
        const req = reqs[verb];
        if (req)
          cells.push({
            p,
            family,
            verb,
            ns: family === 'namespaces' && (verb === 'get' || verb === 'list') ? 'default' : undefined,
            req,
          });
      }
    }
  }
  const wrong = await runCells(cells);
  assert.ok(wrong.length === 0, report(wrong, cells.length));
});

test('matrix in namespace "other": namespace-bound principals are refused there', async () => {
  const cells: Cell[] = [];
  for (const p of PRINCIPALS) {
    for (const family of NS_FAMILIES) {
      const reqs = nsRequests(family, 'other', p.tag);
      for (const verb of VERBS) cells.push({ p, family, verb, ns: 'other', req: reqs[verb] });
    }
    const nsReqs = clusterRequests('namespaces', p.tag, 'other');
    cells.push({ p, family: 'namespaces', verb: 'get', ns: 'other', req: nsReqs.get! });
    cells.push({ p, family: 'namespaces', verb: 'list', ns: 'other', req: nsReqs.list! });
  }
  const wrong = await runCells(cells);
  assert.ok(wrong.length === 0, report(wrong, cells.length));
});

test('the other routes (PATCH, sub-resources, actions) check the verb and resource of what they do', async () => {
  const cells: Cell[] = [];
  for (const p of PRINCIPALS)
    for (const x of extraRequests(p.tag))
      cells.push({ p, family: x.family, verb: x.verb, ns: x.ns, req: x.req });
  const wrong = await runCells(cells);
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
