// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh, isError, type Body } from '../harness/api.ts';
import { collection, KINDS, named, one, withMeta } from './api-config-resources/kinds.ts';

// The REST contract of every configuration resource kept in etcd (assets, checks, filters, handlers,
// hooks, mutators, pipelines, roles, rolebindings, silenced, clusterroles, clusterrolebindings):
// create, conflict, read with ETag, create-or-replace, merge patch with preconditions, delete, lists
// in one and in all namespaces, the wrapped form, name/namespace mismatches, missing namespaces, and
// the validation of each kind. The kinds are in test/e2e/api-config-resources/kinds.ts; the silenced
// and check extras in api-config-resources-extras.test.ts.

let backend: Backend;
const OTHER_NS = 'cfg-other';

const api = coreApi(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'api-config' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  const r = await api('/namespaces', 'POST', { name: OTHER_NS });
  if (r.status !== 201)
    throw new Error(`cannot create namespace ${OTHER_NS}: ${r.status} ${JSON.stringify(r.body)}`);
});

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

test('user JavaScript that does not compile is 400 naming the field; code that compiles is stored, never run', async () => {
  // Regression (issue 13): these were stored (201) and failed at every evaluation.
  const sha512 = 'a'.repeat(128);
  const cases: Array<{ plural: string; body: Body; field: RegExp; fix: Body }> = [
    {
      plural: 'filters',
      body: { action: 'allow', expressions: ['event.check.status == 2', 'event.('] },
      field: /^invalid filter: expressions\[1\]: expression does not compile: SyntaxError/,
      fix: { action: 'allow', expressions: ['event.check.status == 2', '(function () { for (;;) {} })()'] },
    },
    {
      plural: 'mutators',
      body: { type: 'javascript', eval: 'return (' },
      field: /^invalid mutator: eval: function body does not compile: SyntaxError/,
      fix: { type: 'javascript', eval: 'while (true) {}' },
    },
    {
      plural: 'checks',
      body: {
        command: 'true',
        interval: 60,
        proxy_requests: { entity_attributes: ["entity.entity_class == 'proxy'", 'entity.labels.('] },
      },
      field: /^invalid check: proxy_requests\.entity_attributes\[1\]: script does not compile: SyntaxError/,
      fix: {
        command: 'true',
        interval: 60,
        proxy_requests: { entity_attributes: ["Promise.reject(new Error('x')), true"] },
      },
    },
    {
      plural: 'assets',
      body: { url: 'http://127.0.0.1:1/a.tar.gz', sha512, filters: ["entity.system.os == 'linux' &&"] },
      field: /^invalid asset: filters\[0\]: script does not compile: SyntaxError/,
      fix: { url: 'http://127.0.0.1:1/a.tar.gz', sha512, filters: ['Promise.reject(1)'] },
    },
    {
      plural: 'assets',
      body: { builds: [{ url: 'http://127.0.0.1:1/a.tar.gz', sha512, filters: ['}'] }] },
      field: /^invalid asset: builds\[0\]\.filters\[0\]: script does not compile: SyntaxError/,
      fix: { builds: [{ url: 'http://127.0.0.1:1/a.tar.gz', sha512, filters: ['true'] }] },
    },
  ];
  for (const c of cases) {
    const name = fresh(`js-${c.plural}`);
    const url = `/namespaces/default/${c.plural}/${name}`;
    const bad = await api(url, 'PUT', { metadata: { name }, ...c.body });
    isError(bad, 400, `PUT ${c.plural} with a syntax error`);
    assert.match(bad.body.message, c.field, bad.body.message);
    isError(
      await api(`/namespaces/default/${c.plural}`, 'POST', { metadata: { name }, ...c.body }),
      400,
      'POST',
    );
    isError(await api(url), 404, 'nothing was stored');
    // Code that compiles is stored as it is, never run by the check (an endless loop is fine here).
    created(await api(url, 'PUT', { metadata: { name }, ...c.fix }), `PUT ${c.plural} that compiles`);
    // PATCH back to the syntax error: 400, and the stored resource is unchanged.
    const patched = await api(url, 'PATCH', c.body);
    isError(patched, 400, `PATCH ${c.plural} with a syntax error`);
    assert.match(patched.body.message, c.field, patched.body.message);
    const got = await api(url);
    for (const [k, v] of Object.entries(c.fix)) assert.equal(got.body[k], v, `${c.plural}.${k} unchanged`);
  }
  // A pipe mutator's eval is not JavaScript: not checked.
  created(
    await api(`/namespaces/default/mutators/${fresh('pipe-eval')}`, 'PUT', {
      type: 'pipe',
      command: 'cat',
      eval: 'not ( javascript',
    }),
    'a pipe mutator with an eval',
  );
  const health = await backend.health();
  assert.is(health.status, 200);
});

test.run();
