// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { adminAuth, getJson, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { basic, bearer, coreApi, created, isError } from '../harness/api.ts';

// The dashboard's events API (docs/compatibility.md#dashboard-events-api) against a real backend:
// bad input is a 400 `{message, code}` naming the parameter; authentication and RBAC are the core
// lists' (a namespace the subject may not list is a 403, across namespaces it is left out); the
// orders, filters, counts and paging; `silenced_by` follows the silenced entries as they are now;
// entities are redacted as in the core list.

let backend: Backend;
const api = coreApi(() => backend);
const NS = 'dea-one';
const OTHER = 'dea-two';
const PW = 'dea-pass-123';
let viewer = '';

/** A call as the administrator, or with the given Authorization. */
const dash = (path: string, headers: Record<string, string> = adminAuth) =>
  backend.get(`/api/dashboard/v1${path}`, { headers });

async function post(ns: string, entity: string, check: string, status: number, extra: object = {}) {
  created(
    await api(`/namespaces/${ns}/events`, 'POST', {
      entity: { metadata: { name: entity, namespace: ns }, entity_class: 'proxy', ...extra },
      check: { metadata: { name: check, namespace: ns }, status, output: `${check} ${status}`, interval: 60 },
    }),
    `event ${ns}/${entity}/${check}`,
  );
}

const names = (body: any) =>
  (body.items as any[]).map((e) => `${e.entity.metadata.name}/${e.check.metadata.name}`);

test.before(async () => {
  backend = await startBackend({ name: 'dash-events-api', logLevel: 'warn' });
  for (const ns of [NS, OTHER]) created(await api('/namespaces', 'POST', { name: ns }), `namespace ${ns}`);
  // History gives each its last change and last OK: web-1/disk was passing, then critical.
  await post(NS, 'web-1', 'disk', 0);
  await post(NS, 'web-1', 'disk', 2);
  await post(NS, 'web-1', 'load', 1);
  await post(NS, 'web-2', 'disk', 0);
  await post(NS, 'web-2', 'odd', 3);
  await post(NS, 'db-1', 'disk', 2, {
    metadata: { name: 'db-1', namespace: NS, labels: { region: 'eu', api_key: 'hunter2' } },
  });
  await post(OTHER, 'far-1', 'disk', 2);
  created(await api('/users', 'POST', { username: 'dea-viewer', password: PW, groups: [] }), 'user');
  created(
    await api(`/namespaces/${NS}/rolebindings`, 'POST', {
      metadata: { name: 'dea-viewer' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 'dea-viewer' }],
    }),
    'rolebinding',
  );
  const login = await getJson(`${backend.apiUrl}/auth`, { headers: basic('dea-viewer', PW) });
  assert.is(login.status, 200);
  viewer = login.body.access_token;
  await waitFor(async () => (await dash(`/events?limit=0`)).body.total === 6 || undefined, {
    timeoutMs: 10_000,
    what: 'the read model to hold the 6 events',
  });
});

test.after(async () => {
  await backend?.stop();
});

test('bad input is a 400 {message, code} that names the parameter', async () => {
  const cases: Array<[string, RegExp]> = [
    ['sort=newest', /sort must be one of severity, last_change, last_ok, entity/],
    ['limit=1001', /limit must be at most 1000/],
    ['limit=-1', /limit must be a whole number/],
    ['limit=ten', /limit must be a whole number/],
    ['offset=1.5', /offset must be a whole number/],
    [
      'status=purple',
      /status\[0\]: "purple" is neither a whole number nor one of passing, warning, critical, unknown/,
    ],
    ['status=2,-1', /status\[1\]/],
    ['silenced=yes', /silenced must be true or false/],
    ['flapping=1', /flapping must be true or false/],
    ['colour=red', /colour: unknown parameter/],
    [`fieldSelector=${encodeURIComponent('check.status')}`, /invalid fieldSelector "check.status"/],
    [`labelSelector=${encodeURIComponent('region ~ eu')}`, /invalid labelSelector/],
  ];
  for (const [query, message] of cases)
    for (const path of [`/namespaces/${NS}/events?${query}`, `/events?${query}`]) {
      const r = await dash(path);
      isError(r, 400, path);
      assert.match(r.body.message, message, path);
    }
});

test('authentication and RBAC: 401 without a credential, 403 where the user may not list, 404s', async () => {
  isError(await getJson(`${backend.apiUrl}/api/dashboard/v1/namespaces/${NS}/events`), 401, 'no credential');
  isError(await dash(`/namespaces/${NS}/events`, bearer('not-a-token')), 401, 'bad token');
  isError(await dash(`/namespaces/${OTHER}/events`, bearer(viewer)), 403, 'viewer in the other namespace');
  isError(await dash(`/namespaces/${OTHER}/events/far-1/disk`, bearer(viewer)), 403, 'viewer, one event');
  isError(await dash('/namespaces/no-such-ns/events'), 404, 'unknown namespace');
  isError(await dash(`/namespaces/${NS}/events/web-1/nope`), 404, 'unknown event');
  const mine = await dash(`/namespaces/${NS}/events?limit=0`, bearer(viewer));
  assert.is(mine.status, 200);
  assert.is(mine.body.total, 5);
  // Across namespaces, the viewer sees its namespace only; the administrator both.
  const across = await dash('/events?sort=entity', bearer(viewer));
  assert.is(across.status, 200);
  assert.is(across.body.total, 5);
  assert.ok(across.body.items.every((e: any) => e.check.metadata.namespace === NS));
  assert.is((await dash('/events?limit=0')).body.total, 6);
});

/** When the current status began, as the server sorts `last_change`. */
function lastChange(e: any): number {
  const h: Array<{ status: number; executed: number }> = e.check.history ?? [];
  let at = e.check.executed;
  for (let i = h.length - 1; i >= 0 && h[i]!.status === e.check.status; i--) at = h[i]!.executed;
  return at;
}
const rank = (s: number) => (s === 2 ? 0 : s === 1 ? 1 : s === 0 ? 3 : 2);
const ordered = (xs: number[]) => xs.every((x, i) => i === 0 || xs[i - 1]! <= x);

test('sorted by severity, last change, last OK or entity; every order is stable over pages', async () => {
  const sev = await dash(`/namespaces/${NS}/events`);
  assert.is(sev.status, 200);
  assert.is(sev.headers.get('cache-control'), 'no-store');
  assert.equal(
    (sev.body.items as any[]).map((e) => e.check.status),
    [2, 2, 1, 3, 0],
    'critical, warning, unknown, passing',
  );
  assert.equal(names((await dash(`/namespaces/${NS}/events?sort=entity`)).body), [
    'db-1/disk',
    'web-1/disk',
    'web-1/load',
    'web-2/disk',
    'web-2/odd',
  ]);
  // Never passing first, then the oldest last OK: web-1/disk passed once, web-2/disk passes now.
  const lastOk = (await dash(`/namespaces/${NS}/events?sort=last_ok`)).body.items as any[];
  assert.ok(ordered(lastOk.map((e) => e.check.last_ok)), JSON.stringify(names({ items: lastOk })));
  assert.equal(names({ items: lastOk }).slice(3), ['web-1/disk', 'web-2/disk']);
  // The newest change first: web-1/disk changed (0 to 2) with its second result.
  const changed = (await dash(`/namespaces/${NS}/events?sort=last_change`)).body.items as any[];
  assert.ok(ordered(changed.map((e) => -lastChange(e))), JSON.stringify(names({ items: changed })));
  const disk = changed.find((e) => e.entity.metadata.name === 'web-1' && e.check.metadata.name === 'disk');
  assert.is(lastChange(disk), disk.check.history[1].executed);
  // Pages of 2 put together are the whole list, in the same order.
  for (const sort of ['severity', 'last_change', 'last_ok', 'entity']) {
    const whole = (await dash(`/namespaces/${NS}/events?sort=${sort}`)).body;
    if (sort === 'severity') assert.ok(ordered(whole.items.map((e: any) => rank(e.check.status))));
    const paged: string[] = [];
    for (let offset = 0; offset < 5; offset += 2) {
      const r = await dash(`/namespaces/${NS}/events?sort=${sort}&limit=2&offset=${offset}`);
      assert.is(r.body.total, 5);
      assert.is(r.body.offset, offset);
      paged.push(...names(r.body));
    }
    assert.equal(paged, names(whole), sort);
  }
});

test('filters: status words and numbers, entity and check substrings, selectors; counts ignore the status filters', async () => {
  const r = await dash(`/namespaces/${NS}/events?status=critical`);
  assert.equal(names(r.body).sort(), ['db-1/disk', 'web-1/disk']);
  assert.equal(r.body.total, 2);
  assert.equal(r.body.counts, {
    total: 5,
    critical: 2,
    warning: 1,
    unknown: 1,
    passing: 1,
    silenced: 0,
    flapping: 0,
  });
  assert.equal(names((await dash(`/namespaces/${NS}/events?status=unknown`)).body), ['web-2/odd']);
  assert.equal(names((await dash(`/namespaces/${NS}/events?status=3`)).body), ['web-2/odd']);
  assert.equal(names((await dash(`/namespaces/${NS}/events?status=1,passing&sort=entity`)).body), [
    'web-1/load',
    'web-2/disk',
  ]);
  const web = await dash(`/namespaces/${NS}/events?entity=WEB&check=dis&sort=entity`);
  assert.equal(names(web.body), ['web-1/disk', 'web-2/disk']);
  assert.is(web.body.counts.total, 2, 'counts follow the entity and check filters');
  const sel = await dash(
    `/namespaces/${NS}/events?labelSelector=${encodeURIComponent('region == eu')}&fieldSelector=${encodeURIComponent('check.status == 2')}`,
  );
  assert.equal(names(sel.body), ['db-1/disk']);
  const none = await dash(`/namespaces/${NS}/events?flapping=true`);
  assert.equal(none.body.items, []);
  const counts = await dash(`/namespaces/${NS}/events?limit=0`);
  assert.equal(counts.body.items, [], 'limit=0: the counts and total only');
  assert.is(counts.body.total, 5);
});

test('silenced_by is what silences the event now; silenced=true filters on it', async () => {
  const entry = {
    metadata: { name: 'entity:web-1:*', namespace: NS },
    subscription: 'entity:web-1',
    expire: 600,
  };
  created(await api(`/namespaces/${NS}/silenced`, 'POST', entry), 'silenced entry');
  const r = await dash(`/namespaces/${NS}/events?silenced=true&sort=entity`);
  assert.equal(names(r.body), ['web-1/disk', 'web-1/load']);
  assert.equal(r.body.items[0].silenced_by, ['entity:web-1:*']);
  assert.is(r.body.counts.silenced, 2);
  // The stored event still says what silenced it at its last result: nothing.
  assert.not.ok(r.body.items[0].check.is_silenced);
  const one = await dash(`/namespaces/${NS}/events/web-1/load`);
  assert.equal(one.body.silenced_by, ['entity:web-1:*']);
  assert.is((await api(`/namespaces/${NS}/silenced/entity:web-1:*`, 'DELETE')).status, 204);
  const after = await dash(`/namespaces/${NS}/events?silenced=true`);
  assert.equal(after.body.items, []);
  assert.equal((await dash(`/namespaces/${NS}/events/web-1/load`)).body.silenced_by, []);
});

test('entities are redacted as in the core list, in the list and in one event', async () => {
  const list = await dash(`/namespaces/${NS}/events?entity=db-1`);
  assert.is(list.body.items[0].entity.metadata.labels.api_key, 'REDACTED');
  assert.is(list.body.items[0].entity.metadata.labels.region, 'eu');
  const one = await dash(`/namespaces/${NS}/events/db-1/disk`);
  assert.is(one.body.entity.metadata.labels.api_key, 'REDACTED');
  assert.not.ok(JSON.stringify(list.body).includes('hunter2'));
  assert.not.ok(JSON.stringify(one.body).includes('hunter2'));
});

test.run();
