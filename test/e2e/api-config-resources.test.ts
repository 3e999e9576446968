// suite-timeout: 180
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loud, startBackend, waitFor, type Backend, type JsonResponse } from '../harness/index.ts';
import { coreApi, created, fresh, isError, type Body } from '../harness/api.ts';

// The REST contract of every configuration resource kept in etcd (assets, checks, filters, handlers,
// hooks, mutators, pipelines, roles, rolebindings, silenced, clusterroles, clusterrolebindings):
// create, conflict, read with ETag, create-or-replace, merge patch with preconditions, delete, lists
// in one and in all namespaces, the wrapped form, name/namespace mismatches, missing namespaces, the
// validation of each kind, and the silenced and check extras.

let backend: Backend;
const OTHER_NS = 'cfg-other';

const api = coreApi(() => backend);

/** An error answer: the status, and a body that is exactly `{message, code}`. */

const SHA = 'a'.repeat(128);
const ref = (name: string, type: string) => ({ name, type, api_version: 'core/v2' });

interface Kind {
  plural: string;
  namespaced: boolean;
  /** A fresh name (silenced names are derived from the body). */
  name(): string;
  /** A minimal valid body (without metadata). */
  body(name: string): Body;
  /** A merge patch and what must hold afterwards. */
  patch: Body;
  /** A field of body() that the patch leaves alone. */
  kept: string;
  type: string;
}

const silencedParts = (name: string) => {
  const [subscription, check] = name.split(':');
  return { subscription: subscription!, check: check! };
};

const KINDS: Kind[] = [
  {
    plural: 'assets',
    type: 'Asset',
    namespaced: true,
    name: () => fresh('asset'),
    body: () => ({ url: 'https://example.com/asset.tar.gz', sha512: SHA }),
    patch: { filters: ["entity.system.os == 'linux'"] },
    kept: 'url',
  },
  {
    plural: 'checks',
    type: 'CheckConfig',
    namespaced: true,
    name: () => fresh('check'),
    body: () => ({ command: 'true', interval: 60, subscriptions: ['linux'], publish: true }),
    patch: { interval: 30, handlers: ['slack'] },
    kept: 'command',
  },
  {
    plural: 'filters',
    type: 'EventFilter',
    namespaced: true,
    name: () => fresh('filter'),
    body: () => ({ action: 'allow', expressions: ['event.check.status != 0'] }),
    patch: { expressions: ['event.check.status == 2'] },
    kept: 'action',
  },
  {
    plural: 'handlers',
    type: 'Handler',
    namespaced: true,
    name: () => fresh('handler'),
    body: () => ({ type: 'pipe', command: 'cat' }),
    patch: { timeout: 10 },
    kept: 'command',
  },
  {
    plural: 'hooks',
    type: 'HookConfig',
    namespaced: true,
    name: () => fresh('hook'),
    body: () => ({ command: 'ps aux', timeout: 60 }),
    patch: { timeout: 5 },
    kept: 'command',
  },
  {
    plural: 'mutators',
    type: 'Mutator',
    namespaced: true,
    name: () => fresh('mutator'),
    body: () => ({ type: 'pipe', command: 'cat' }),
    patch: { timeout: 7 },
    kept: 'command',
  },
  {
    plural: 'pipelines',
    type: 'Pipeline',
    namespaced: true,
    name: () => fresh('pipeline'),
    body: () => ({ workflows: [{ name: 'w1', handler: ref('h1', 'Handler') }] }),
    patch: {
      workflows: [
        { name: 'w2', handler: ref('h2', 'Handler'), filters: [ref('is_incident', 'EventFilter')] },
      ],
    },
    kept: 'metadata',
  },
  {
    plural: 'roles',
    type: 'Role',
    namespaced: true,
    name: () => fresh('role'),
    body: () => ({ rules: [{ verbs: ['get'], resources: ['checks'] }] }),
    patch: { rules: [{ verbs: ['list'], resources: ['events'] }] },
    kept: 'metadata',
  },
  {
    plural: 'rolebindings',
    type: 'RoleBinding',
    namespaced: true,
    name: () => fresh('rb'),
    body: () => ({
      role_ref: { type: 'Role', name: 'some-role' },
      subjects: [{ type: 'User', name: 'bob' }],
    }),
    patch: { subjects: [{ type: 'Group', name: 'ops' }] },
    kept: 'role_ref',
  },
  {
    plural: 'silenced',
    type: 'Silenced',
    namespaced: true,
    name: () => `${fresh('sub')}:${fresh('chk')}`,
    body: (name) => ({ ...silencedParts(name) }),
    patch: { reason: 'maintenance' },
    kept: 'subscription',
  },
  {
    plural: 'clusterroles',
    type: 'ClusterRole',
    namespaced: false,
    name: () => fresh('crole'),
    body: () => ({ rules: [{ verbs: ['get'], resources: ['checks'] }] }),
    patch: { rules: [{ verbs: ['*'], resources: ['events'] }] },
    kept: 'metadata',
  },
  {
    plural: 'clusterrolebindings',
    type: 'ClusterRoleBinding',
    namespaced: false,
    name: () => fresh('crb'),
    body: () => ({
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 'bob' }],
    }),
    patch: { subjects: [{ type: 'Group', name: 'ops' }] },
    kept: 'role_ref',
  },
];

const collection = (k: Kind, ns = 'default') =>
  k.namespaced ? `/namespaces/${ns}/${k.plural}` : `/${k.plural}`;
const one = (k: Kind, name: string, ns = 'default') => `${collection(k, ns)}/${name}`;
const withMeta = (k: Kind, name: string, ns = 'default', extra: Body = {}): Body => ({
  ...k.body(name),
  metadata: { name, ...(k.namespaced ? { namespace: ns } : {}), ...extra },
});
const named = (list: Body[], name: string, ns?: string) =>
  list.find((x) => x.metadata?.name === name && (ns === undefined || x.metadata?.namespace === ns));

test.before(
  loud(async () => {
    backend = await startBackend({ name: 'api-config' });
    await waitFor(async () => (await api('/namespaces')).status === 200, {
      timeoutMs: 10000,
      what: 'the admin API key to work',
    });
    const r = await api('/namespaces', 'POST', { name: OTHER_NS });
    if (r.status !== 201)
      throw new Error(`cannot create namespace ${OTHER_NS}: ${r.status} ${JSON.stringify(r.body)}`);
  }),
);

test.after(async () => {
  await backend?.stop();
});

for (const k of KINDS) {
  test(`${k.plural}: POST 201, 409, GET with ETag and 304, PATCH 200 and 412, DELETE 204 then 404`, async () => {
    const name = k.name();
    const body = withMeta(k, name);
    if (k.plural === 'silenced') delete body.metadata.name; // derived from subscription and check

    created(await api(collection(k), 'POST', body), 'POST');
    isError(await api(collection(k), 'POST', body), 409, 'POST again');

    const got = await api(one(k, name));
    assert.is(got.status, 200, `GET: ${JSON.stringify(got.body)}`);
    assert.is(got.body.metadata.name, name);
    if (k.namespaced) assert.is(got.body.metadata.namespace, 'default');
    else assert.is(got.body.metadata.namespace, undefined, 'a cluster-wide resource has no namespace');
    assert.is(got.body.metadata.created_by, 'admin');
    for (const [key, value] of Object.entries(k.body(name)))
      assert.equal(got.body[key], value, `GET returns ${key}`);
    const etag = got.headers.get('etag');
    assert.ok(etag, 'GET has an ETag');
    assert.match(got.headers.get('content-type') ?? '', /application\/json/);

    const again = await api(one(k, name), 'GET', undefined, { 'If-None-Match': etag! });
    assert.is(again.status, 304, 'If-None-Match with the current ETag');
    assert.is(again.body, '');
    const stale = await api(one(k, name), 'GET', undefined, { 'If-None-Match': '"not-the-etag"' });
    assert.is(stale.status, 200, 'If-None-Match with another ETag');

    isError(
      await api(one(k, name), 'PATCH', k.patch, { 'If-Match': '"not-the-etag"' }),
      412,
      'PATCH with a wrong If-Match',
    );
    isError(
      await api(one(k, name), 'PATCH', k.patch, { 'If-None-Match': etag! }),
      412,
      'PATCH with If-None-Match of the current ETag',
    );
    const patched = await api(one(k, name), 'PATCH', k.patch, {
      'If-Match': etag!,
      'Content-Type': 'application/merge-patch+json',
    });
    assert.is(patched.status, 200, `PATCH: ${JSON.stringify(patched.body)}`);
    for (const [key, value] of Object.entries(k.patch))
      assert.equal(patched.body[key], value, `PATCH set ${key}`);
    assert.equal(patched.body[k.kept], got.body[k.kept], `PATCH kept ${k.kept}`);
    assert.is(patched.body.metadata.name, name);
    assert.is(patched.body.metadata.created_by, 'admin');
    assert.ok(patched.headers.get('etag'), 'PATCH answer has an ETag');
    assert.is.not(patched.headers.get('etag'), etag, 'a changed resource has a new ETag');

    const after = await api(one(k, name));
    assert.equal(after.body, patched.body, 'GET after PATCH shows the merged resource');
    assert.is(after.headers.get('etag'), patched.headers.get('etag'));
    isError(await api(one(k, name), 'PATCH', k.patch, { 'If-Match': etag! }), 412, 'PATCH with the old ETag');

    assert.is((await api(one(k, name), 'DELETE')).status, 204, 'DELETE');
    isError(await api(one(k, name), 'DELETE'), 404, 'DELETE again');
    isError(await api(one(k, name)), 404, 'GET after DELETE');
    isError(await api(one(k, name), 'PATCH', k.patch), 404, 'PATCH of a missing resource');
  });

  test(`${k.plural}: PUT creates then replaces; lists; wrapped form; mismatches 400; missing namespace 404`, async () => {
    const name = k.name();
    created(
      await api(one(k, name), 'PUT', withMeta(k, name, 'default', { labels: { first: 'yes' } })),
      'PUT create',
    );
    let got = await api(one(k, name));
    assert.is(got.status, 200);
    assert.equal(got.body.metadata.labels, { first: 'yes' });
    assert.is(got.body.metadata.created_by, 'admin');
    created(
      await api(one(k, name), 'PUT', { ...k.body(name), metadata: { labels: { second: 'yes' } } }),
      'PUT replace',
    );
    got = await api(one(k, name));
    assert.equal(got.body.metadata.labels, { second: 'yes' }, 'PUT replaces the whole resource');
    assert.is(got.body.metadata.name, name);

    // Lists: in the namespace, and across namespaces.
    const list = await api<Body[]>(collection(k));
    assert.is(list.status, 200);
    assert.ok(Array.isArray(list.body));
    assert.ok(named(list.body, name), `${name} in the list`);
    if (k.namespaced) {
      const elsewhere = k.name();
      created(
        await api(collection(k, OTHER_NS), 'POST', withMeta(k, elsewhere, OTHER_NS)),
        `POST in ${OTHER_NS}`,
      );
      const inOther = await api<Body[]>(collection(k, OTHER_NS));
      assert.ok(named(inOther.body, elsewhere, OTHER_NS), 'item in its namespace list');
      assert.not.ok(named(inOther.body, name), 'the default item is not in the other namespace list');
      assert.not.ok(named(list.body, elsewhere), 'the other namespace item is not in the default list');
      const all = await api<Body[]>(`/${k.plural}`);
      assert.is(all.status, 200, `all-namespaces list: ${JSON.stringify(all.body)}`);
      assert.ok(named(all.body, name, 'default'), 'all-namespaces list has the default item');
      assert.ok(named(all.body, elsewhere, OTHER_NS), 'all-namespaces list has the other namespace item');
    }

    // The wrapped form, on POST and PUT.
    const wrappedName = k.name();
    const wrap = (n: string, extra: Body = {}) => ({
      type: k.type,
      api_version: 'core/v2',
      metadata: { name: n, ...(k.namespaced ? { namespace: 'default' } : {}) },
      spec: { ...k.body(n), ...extra },
    });
    created(await api(collection(k), 'POST', wrap(wrappedName)), 'POST wrapped');
    const w = await api(one(k, wrappedName));
    assert.is(w.status, 200);
    for (const [key, value] of Object.entries(k.body(wrappedName)))
      assert.equal(w.body[key], value, `wrapped POST stored ${key}`);
    assert.is(w.body.spec, undefined, 'stored flat');
    assert.is(
      w.body.type,
      k.plural === 'handlers' || k.plural === 'mutators' ? 'pipe' : undefined,
      'the wrapper type (e.g. "Handler") is not stored; handlers and mutators keep their own type',
    );
    created(await api(one(k, wrappedName), 'PUT', wrap(wrappedName, k.patch)), 'PUT wrapped');
    const w2 = await api(one(k, wrappedName));
    for (const [key, value] of Object.entries(k.patch))
      assert.equal(w2.body[key], value, `wrapped PUT stored ${key}`);

    // Names and namespaces that contradict the URL.
    const other = k.name();
    isError(
      await api(one(k, name), 'PUT', withMeta(k, name, 'default', { name: other })),
      400,
      'PUT with another metadata.name',
    );
    if (k.namespaced) {
      isError(
        await api(one(k, name), 'PUT', withMeta(k, name, OTHER_NS)),
        400,
        'PUT with another metadata.namespace',
      );
      isError(
        await api(collection(k), 'POST', withMeta(k, k.name(), OTHER_NS)),
        400,
        'POST with another metadata.namespace',
      );
      // Nothing is created in a namespace nobody made.
      const ghost = fresh('no-such-ns');
      isError(
        await api(collection(k, ghost), 'POST', withMeta(k, k.name(), ghost)),
        404,
        'POST in a missing namespace',
      );
      isError(await api(one(k, k.name(), ghost), 'PUT', k.body(k.name())), 404, 'PUT in a missing namespace');
    }
    assert.is((await api(one(k, name), 'DELETE')).status, 204);
  });
}

test('created_by comes from the authenticated user, not from the body', async () => {
  const name = fresh('spoof');
  created(
    await api('/namespaces/default/checks', 'POST', {
      command: 'true',
      interval: 60,
      metadata: { name, created_by: 'mallory' },
    }),
    'POST',
  );
  assert.is((await api(`/namespaces/default/checks/${name}`)).body.metadata.created_by, 'admin');
  created(
    await api(`/namespaces/default/checks/${name}`, 'PUT', {
      command: 'true',
      interval: 60,
      metadata: { created_by: 'mallory' },
    }),
    'PUT',
  );
  assert.is((await api(`/namespaces/default/checks/${name}`)).body.metadata.created_by, 'admin');
});

test('silenced PUT with a name other than <subscription>:<check> is 400', async () => {
  isError(
    await api('/namespaces/default/silenced/foo:bar', 'PUT', { subscription: 'foo', check: 'baz' }),
    400,
    'PUT foo:bar with check baz',
  );
  isError(
    await api('/namespaces/default/silenced', 'POST', {
      metadata: { name: 'x:y' },
      subscription: 'foo',
      check: 'baz',
    }),
    400,
    'POST named x:y for foo:baz',
  );
});

// --- per-resource validation -------------------------------------------------------------------

const INVALID: Array<[string, string, Body, RegExp?]> = [
  ['a pipe handler without command', 'handlers', { type: 'pipe' }, /command/],
  ['a handler without type or command (pipe by default)', 'handlers', {}, /command/],
  ['a tcp handler without socket', 'handlers', { type: 'tcp' }, /socket/],
  ['a udp handler without socket port', 'handlers', { type: 'udp', socket: { host: '127.0.0.1' } }],
  ['a set handler without handlers', 'handlers', { type: 'set' }, /handlers/],
  ['a handler of an unknown type', 'handlers', { type: 'carrier-pigeon', command: 'x' }, /type/],
  ['a filter with a bad action', 'filters', { action: 'maybe', expressions: ['true'] }, /action/],
  ['a filter without expressions', 'filters', { action: 'allow', expressions: [] }, /expression/],
  ['a javascript mutator without eval', 'mutators', { type: 'javascript' }, /eval/],
  ['a pipe mutator without command', 'mutators', { type: 'pipe' }, /command/],
  ['an asset without url and sha512', 'assets', {}, /url/],
  ['an asset with a url but no sha512', 'assets', { url: 'https://example.com/a.tgz' }, /sha512/],
  ['an asset with a bad sha512', 'assets', { url: 'https://example.com/a.tgz', sha512: 'abc' }, /sha512/],
  [
    'a check with both interval and cron',
    'checks',
    { command: 'true', interval: 60, cron: '* * * * *' },
    /cron/,
  ],
  [
    'a check with neither interval nor cron (publish true)',
    'checks',
    { command: 'true', publish: true },
    /interval/,
  ],
  ['a check with ttl equal to the interval', 'checks', { command: 'true', interval: 60, ttl: 60 }, /ttl/],
  ['a check with ttl below the interval', 'checks', { command: 'true', interval: 60, ttl: 30 }, /ttl/],
  ['a check without command', 'checks', { interval: 60 }, /command/],
  ['a check with a negative interval', 'checks', { command: 'true', interval: -5 }, /interval/],
  ['a hook without command', 'hooks', {}, /command/],
  ['a pipeline without workflows', 'pipelines', { workflows: [] }, /workflow/],
  ['a role rule without verbs', 'roles', { rules: [{ verbs: [], resources: ['checks'] }] }, /verbs/],
  [
    'a rolebinding without subjects',
    'rolebindings',
    { role_ref: { type: 'Role', name: 'r' }, subjects: [] },
    /subjects/,
  ],
  ['a silenced entry without subscription and check', 'silenced', { reason: 'nothing named' }],
];

for (const [what, plural, body, pattern] of INVALID) {
  test(`400: ${what}`, async () => {
    const name = fresh('bad');
    const r = await api(`/namespaces/default/${plural}`, 'POST', {
      ...body,
      metadata: { name, namespace: 'default' },
    });
    isError(r, 400, what);
    if (pattern) assert.match(r.body.message, pattern, `message of ${what}`);
    const put = await api(
      `/namespaces/default/${plural}/${plural === 'silenced' ? 'foo:bar' : name}`,
      'PUT',
      body,
    );
    isError(put, 400, `PUT ${what}`);
    if (pattern) assert.match(put.body.message, pattern, `PUT message of ${what}`);
    isError(await api(`/namespaces/default/${plural}/${name}`), 404, 'nothing was stored');
  });
}

test('a check with publish false needs no schedule; ttl above the interval is fine', async () => {
  created(
    await api('/namespaces/default/checks', 'POST', {
      command: 'true',
      publish: false,
      metadata: { name: fresh('unpublished') },
    }),
    'publish false',
  );
  created(
    await api('/namespaces/default/checks', 'POST', {
      command: 'true',
      cron: '*/5 * * * *',
      metadata: { name: fresh('cron') },
    }),
    'cron only',
  );
  created(
    await api('/namespaces/default/checks', 'POST', {
      command: 'true',
      interval: 60,
      ttl: 90,
      metadata: { name: fresh('ttl') },
    }),
    'ttl > interval',
  );
});

test('PATCH that makes a resource invalid is 400 and changes nothing', async () => {
  const name = fresh('patchbad');
  created(
    await api('/namespaces/default/checks', 'POST', { command: 'true', interval: 60, metadata: { name } }),
    'POST',
  );
  isError(
    await api(`/namespaces/default/checks/${name}`, 'PATCH', { cron: '* * * * *' }),
    400,
    'PATCH adding a cron to an interval check',
  );
  isError(
    await api(`/namespaces/default/checks/${name}`, 'PATCH', { metadata: { name: 'other' } }),
    400,
    'PATCH renaming',
  );
  const got = await api(`/namespaces/default/checks/${name}`);
  assert.is(got.body.cron, undefined);
  assert.is(got.body.interval, 60);
  const removed = await api(`/namespaces/default/checks/${name}`, 'PATCH', { subscriptions: null });
  assert.is(removed.status, 200, 'null removes a field');
  assert.is(removed.body.subscriptions, undefined);
});

// --- silenced -----------------------------------------------------------------------------------

test('silenced: names derived from subscription and check, creator, begin, expire_at', async () => {
  const before = Math.floor(Date.now() / 1000);
  created(
    await api('/namespaces/default/silenced', 'POST', { subscription: 'linux', check: 'disk' }),
    'linux:disk',
  );
  created(
    await api('/namespaces/default/silenced', 'POST', { check: 'disk', reason: 'all disks' }),
    '*:disk',
  );
  created(await api('/namespaces/default/silenced', 'POST', { subscription: 'linux' }), 'linux:*');
  created(
    await api('/namespaces/default/silenced', 'POST', {
      subscription: 'web',
      check: 'cpu',
      begin: 1_900_000_000,
      expire: 600,
      creator: 'someone-else',
    }),
    'web:cpu',
  );
  created(
    await api('/namespaces/default/silenced', 'POST', { subscription: 'db', check: 'cpu', expire: 300 }),
    'db:cpu',
  );
  const after = Math.floor(Date.now() / 1000);

  const ld = await api('/namespaces/default/silenced/linux:disk');
  assert.is(ld.status, 200, JSON.stringify(ld.body));
  assert.is(ld.body.metadata.name, 'linux:disk');
  assert.is(ld.body.metadata.namespace, 'default');
  assert.is(ld.body.subscription, 'linux');
  assert.is(ld.body.check, 'disk');
  assert.is(ld.body.creator, 'admin', 'creator defaults to the user');
  assert.ok(ld.body.begin >= before && ld.body.begin <= after, `begin ${ld.body.begin} is now`);

  const anyDisk = await api(`/namespaces/default/silenced/${encodeURIComponent('*:disk')}`);
  assert.is(anyDisk.status, 200, JSON.stringify(anyDisk.body));
  assert.is(anyDisk.body.metadata.name, '*:disk');
  assert.is(anyDisk.body.reason, 'all disks');
  const rawStar = await api('/namespaces/default/silenced/*:disk');
  assert.is(rawStar.status, 200, 'an unencoded * in the URL');

  const linuxAny = await api(`/namespaces/default/silenced/${encodeURIComponent('linux:*')}`);
  assert.is(linuxAny.status, 200);
  assert.is(linuxAny.body.metadata.name, 'linux:*');

  const wc = await api('/namespaces/default/silenced/web:cpu');
  assert.is(wc.body.begin, 1_900_000_000);
  assert.is(wc.body.expire, 600);
  assert.is(wc.body.expire_at, 1_900_000_600, 'expire_at = begin + expire');
  assert.is(wc.body.creator, 'someone-else', 'an explicit creator is kept');

  const dc = await api('/namespaces/default/silenced/db:cpu');
  assert.is(dc.body.expire_at, dc.body.begin + 300, 'expire_at = begin (now) + expire');
  assert.ok(dc.body.begin >= before && dc.body.begin <= after);

  // The percent-encoded name reaches the same resource.
  const enc = await api(`/namespaces/default/silenced/${encodeURIComponent('linux:disk')}`);
  assert.is(enc.status, 200);
  assert.is(enc.body.metadata.name, 'linux:disk');
});

test('silenced extras: by subscription, by check, by check in all namespaces', async () => {
  // Independent of the test above: POST, and a 409 means it is already there.
  for (const body of [
    { subscription: 'linux', check: 'disk' },
    { check: 'disk' },
    { subscription: 'linux' },
    { subscription: 'web', check: 'mem' },
  ]) {
    const r = await api('/namespaces/default/silenced', 'POST', body);
    assert.ok(
      r.status === 201 || r.status === 409,
      `POST ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`,
    );
  }
  created(
    await api(`/namespaces/${OTHER_NS}/silenced`, 'POST', { subscription: 'linux', check: 'disk' }),
    `linux:disk in ${OTHER_NS}`,
  );

  const names = (r: JsonResponse<Body[]>) =>
    r.body.map((s) => `${s.metadata.namespace}/${s.metadata.name}`).sort();

  const bySub = await api<Body[]>('/namespaces/default/silenced/subscriptions/linux');
  assert.is(bySub.status, 200, JSON.stringify(bySub.body));
  assert.equal(names(bySub), ['default/linux:*', 'default/linux:disk']);

  const byCheck = await api<Body[]>('/namespaces/default/silenced/checks/disk');
  assert.is(byCheck.status, 200, JSON.stringify(byCheck.body));
  assert.equal(names(byCheck), ['default/*:disk', 'default/linux:disk']);

  const allNs = await api<Body[]>('/silenced/checks/disk');
  assert.is(allNs.status, 200, JSON.stringify(allNs.body));
  assert.equal(names(allNs), ['default/*:disk', 'default/linux:disk', `${OTHER_NS}/linux:disk`].sort());

  const none = await api<Body[]>('/namespaces/default/silenced/subscriptions/nobody-subscribes-here');
  assert.is(none.status, 200);
  assert.equal(none.body, []);
});

test('silenced: PUT of wildcard entries (*:swap, db:*) at their URL', async () => {
  // `sensuctl create` PUTs every resource to its URL, so a wildcard entry must be writable there.
  created(
    await api(`/namespaces/default/silenced/${encodeURIComponent('*:swap')}`, 'PUT', { check: 'swap' }),
    'PUT *:swap',
  );
  created(
    await api(`/namespaces/default/silenced/${encodeURIComponent('db:*')}`, 'PUT', { subscription: 'db' }),
    'PUT db:*',
  );
  const got = await api(`/namespaces/default/silenced/${encodeURIComponent('*:swap')}`);
  assert.is(got.body.metadata.name, '*:swap');
});

test('silenced: PATCH of a wildcard entry (*:load) created by POST', async () => {
  const r = await api('/namespaces/default/silenced', 'POST', { check: 'load' });
  assert.ok(r.status === 201 || r.status === 409, `POST *:load: ${r.status}`);
  const patched = await api(`/namespaces/default/silenced/${encodeURIComponent('*:load')}`, 'PATCH', {
    reason: 'patched',
  });
  assert.is(patched.status, 200, `PATCH *:load: ${JSON.stringify(patched.body)}`);
  assert.is(patched.body.reason, 'patched');
  assert.is(patched.body.metadata.name, '*:load');
});

// --- check extras -------------------------------------------------------------------------------

test('check hooks: PUT /hooks/critical adds, DELETE /hooks/critical/hook/<name> removes', async () => {
  const name = fresh('hooked');
  created(
    await api('/namespaces/default/checks', 'POST', { command: 'true', interval: 60, metadata: { name } }),
    'check',
  );

  created(
    await api(`/namespaces/default/checks/${name}/hooks/critical`, 'PUT', { hooks: ['collect-logs', 'ps'] }),
    'PUT hooks',
  );
  let got = await api(`/namespaces/default/checks/${name}`);
  assert.equal(got.body.check_hooks, [{ type: 'critical', hooks: ['collect-logs', 'ps'] }]);

  created(
    await api(`/namespaces/default/checks/${name}/hooks/warning`, 'PUT', { hooks: ['ps'] }),
    'PUT warning hooks',
  );
  got = await api(`/namespaces/default/checks/${name}`);
  assert.equal(
    got.body.check_hooks.find((h: Body) => h.type === 'warning'),
    { type: 'warning', hooks: ['ps'] },
  );
  assert.equal(
    got.body.check_hooks.find((h: Body) => h.type === 'critical'),
    { type: 'critical', hooks: ['collect-logs', 'ps'] },
  );

  assert.is(
    (await api(`/namespaces/default/checks/${name}/hooks/critical/hook/collect-logs`, 'DELETE')).status,
    204,
    'DELETE hook',
  );
  got = await api(`/namespaces/default/checks/${name}`);
  assert.equal(
    got.body.check_hooks.find((h: Body) => h.type === 'critical'),
    { type: 'critical', hooks: ['ps'] },
  );
  isError(
    await api(`/namespaces/default/checks/${name}/hooks/critical/hook/collect-logs`, 'DELETE'),
    404,
    'DELETE hook again',
  );
  isError(
    await api(`/namespaces/default/checks/${name}/hooks/unknown/hook/ps`, 'DELETE'),
    404,
    'DELETE hook of a type without hooks',
  );

  isError(
    await api(`/namespaces/default/checks/${name}/hooks/critical`, 'PUT', { hooks: 'ps' }),
    400,
    'hooks not an array',
  );
  isError(
    await api(`/namespaces/default/checks/${name}/hooks/critical`, 'PUT', { type: 'warning', hooks: ['ps'] }),
    400,
    'type in body differs from URL',
  );
  isError(
    await api(`/namespaces/default/checks/${name}/hooks/bogus`, 'PUT', { hooks: ['ps'] }),
    400,
    'bad hook type',
  );
  isError(
    await api(`/namespaces/default/checks/${fresh('missing')}/hooks/critical`, 'PUT', { hooks: ['ps'] }),
    404,
    'hooks of a missing check',
  );
});

test('check execute: 202 {issued}, 404 for a missing check', async () => {
  const name = fresh('adhoc');
  created(
    await api('/namespaces/default/checks', 'POST', {
      command: 'true',
      interval: 60,
      subscriptions: ['web'],
      metadata: { name },
    }),
    'check',
  );
  const before = Math.floor(Date.now() / 1000);
  const r = await api(`/namespaces/default/checks/${name}/execute`, 'POST', {
    subscriptions: ['linux'],
    reason: 'test',
  });
  const after = Math.floor(Date.now() / 1000);
  assert.is(r.status, 202, JSON.stringify(r.body));
  assert.equal(Object.keys(r.body), ['issued']);
  assert.type(r.body.issued, 'number');
  assert.ok(
    Number.isInteger(r.body.issued) && r.body.issued >= before && r.body.issued <= after,
    `issued ${r.body.issued} is unix seconds`,
  );
  isError(
    await api(`/namespaces/default/checks/${fresh('missing')}/execute`, 'POST', { subscriptions: ['linux'] }),
    404,
    'execute a missing check',
  );
  isError(
    await api(`/namespaces/default/checks/${name}/execute`, 'POST', {
      check: 'another',
      subscriptions: ['linux'],
    }),
    400,
    'execute with another check in the body',
  );
  isError(
    await api(`/namespaces/default/checks/${name}/execute`, 'POST', { subscriptions: 'linux' }),
    400,
    'execute with subscriptions not an array',
  );
});

test.run();
