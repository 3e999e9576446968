// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend, type JsonResponse } from '../harness/index.ts';
import { coreApi, created, fresh, isError, type Body } from '../harness/api.ts';

// The extras of two configuration resources (the REST contract they share with every other kind is
// in api-config-resources.test.ts): silenced entries (names derived from subscription and check,
// wildcards, creator, begin and expire_at, the lists by subscription and by check) and checks (hooks
// by status, ad hoc execution).

let backend: Backend;
const OTHER_NS = 'cfg-other';

const api = coreApi(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'api-config-extras' });
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
