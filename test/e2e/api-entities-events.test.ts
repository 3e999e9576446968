// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh, isError, type Body } from '../harness/api.ts';

// The REST contract of entities and events, both written through the entity actor: create,
// conflict, read, lists (trailing the writes by the read model's watch), replace, merge patch,
// delete (an entity takes its events with it); events posted on the collection or by name, proxy
// entities made for unknown entities, history and occurrences, keepalives through the API, and the
// 400s of malformed events.

let backend: Backend;
const OTHER_NS = 'ee-other';

const api = coreApi(() => backend);

/** Lists come from a read model that trails writes by milliseconds: wait until `ok` holds. */
const listUntil = (path: string, ok: (items: Body[]) => boolean, what: string) =>
  waitFor(
    async () => {
      const r = await api<Body[]>(path);
      return r.status === 200 && Array.isArray(r.body) && ok(r.body) ? r.body : undefined;
    },
    { timeoutMs: 5000, intervalMs: 50, what },
  );

const hasName = (items: Body[], name: string, ns?: string) =>
  items.some((x) => x.metadata?.name === name && (ns === undefined || x.metadata?.namespace === ns));
const hasEvent = (items: Body[], entity: string, check: string, ns = 'default') =>
  items.some(
    (e) =>
      e.entity?.metadata?.name === entity &&
      e.check?.metadata?.name === check &&
      e.metadata?.namespace === ns,
  );

const event = (entity: string, check: string, status = 0, extra: Body = {}) => ({
  entity: { metadata: { name: entity } },
  check: { metadata: { name: check }, status, output: `status ${status}`, interval: 60, ...extra },
});

test.before(async () => {
  backend = await startBackend({ name: 'api-entities-events' });
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

// --- entities -----------------------------------------------------------------------------------

test('entities: POST 201 (proxy by default, entity:<name> subscription), 409, GET one with ETag', async () => {
  const name = fresh('ent');
  created(
    await api('/namespaces/default/entities', 'POST', {
      metadata: { name, labels: { role: 'db' } },
      subscriptions: ['linux'],
    }),
    'POST',
  );
  isError(
    await api('/namespaces/default/entities', 'POST', { metadata: { name }, subscriptions: ['linux'] }),
    409,
    'POST again',
  );

  const got = await api(`/namespaces/default/entities/${name}`);
  assert.is(got.status, 200, JSON.stringify(got.body));
  assert.is(got.body.metadata.name, name);
  assert.is(got.body.metadata.namespace, 'default');
  assert.equal(got.body.metadata.labels, { role: 'db' });
  assert.is(got.body.metadata.created_by, 'admin');
  assert.is(got.body.entity_class, 'proxy', 'a missing entity_class becomes proxy');
  assert.equal(got.body.subscriptions, ['linux', `entity:${name}`]);
  const etag = got.headers.get('etag');
  assert.ok(etag, 'ETag');
  assert.is(
    (await api(`/namespaces/default/entities/${name}`, 'GET', undefined, { 'If-None-Match': etag! })).status,
    304,
  );

  const agentClass = fresh('ent-agent');
  created(
    await api('/namespaces/default/entities', 'POST', {
      metadata: { name: agentClass },
      entity_class: 'agent',
    }),
    'POST agent class',
  );
  const a = await api(`/namespaces/default/entities/${agentClass}`);
  assert.is(a.body.entity_class, 'agent', 'an explicit class is kept');
  assert.equal(a.body.subscriptions, [`entity:${agentClass}`]);
});

test('entities: list in a namespace and across namespaces', async () => {
  const here = fresh('ent-here');
  const there = fresh('ent-there');
  created(await api('/namespaces/default/entities', 'POST', { metadata: { name: here } }), 'POST default');
  created(
    await api(`/namespaces/${OTHER_NS}/entities`, 'POST', { metadata: { name: there } }),
    `POST ${OTHER_NS}`,
  );
  const list = await listUntil(
    '/namespaces/default/entities',
    (l) => hasName(l, here),
    `${here} in the default list`,
  );
  assert.not.ok(hasName(list, there), 'the other namespace entity is not in the default list');
  const other = await listUntil(
    `/namespaces/${OTHER_NS}/entities`,
    (l) => hasName(l, there),
    `${there} in the ${OTHER_NS} list`,
  );
  assert.not.ok(hasName(other, here));
  await listUntil(
    '/entities',
    (l) => hasName(l, here, 'default') && hasName(l, there, OTHER_NS),
    'both in the all-namespaces list',
  );
});

test('entities: PUT creates and replaces, PATCH merges (200), If-Match 412', async () => {
  const name = fresh('ent-put');
  created(
    await api(`/namespaces/default/entities/${name}`, 'PUT', {
      metadata: { labels: { a: '1' } },
      subscriptions: ['linux'],
      entity_class: 'proxy',
    }),
    'PUT create',
  );
  let got = await api(`/namespaces/default/entities/${name}`);
  assert.is(got.status, 200);
  assert.equal(got.body.subscriptions, ['linux', `entity:${name}`]);
  assert.equal(got.body.metadata.labels, { a: '1' });

  created(
    await api(`/namespaces/default/entities/${name}`, 'PUT', {
      metadata: { name, namespace: 'default', labels: { b: '2' } },
      subscriptions: ['web'],
    }),
    'PUT replace',
  );
  got = await api(`/namespaces/default/entities/${name}`);
  assert.equal(got.body.subscriptions, ['web', `entity:${name}`], 'PUT replaces the subscriptions');
  assert.equal(got.body.metadata.labels, { b: '2' }, 'PUT replaces the labels');
  assert.is(got.body.entity_class, 'proxy');

  const etag = got.headers.get('etag')!;
  isError(
    await api(
      `/namespaces/default/entities/${name}`,
      'PATCH',
      { metadata: { labels: { c: '3' } } },
      { 'If-Match': '"stale"' },
    ),
    412,
    'PATCH with a wrong If-Match',
  );
  const patched = await api(
    `/namespaces/default/entities/${name}`,
    'PATCH',
    { metadata: { labels: { c: '3' } }, redact: ['token'] },
    { 'If-Match': etag },
  );
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.metadata.labels, { b: '2', c: '3' }, 'labels merged');
  assert.equal(patched.body.redact, ['token']);
  assert.equal(patched.body.subscriptions, ['web', `entity:${name}`], 'untouched fields kept');
  assert.is(patched.body.metadata.name, name);
  got = await api(`/namespaces/default/entities/${name}`);
  assert.equal(got.body, patched.body, 'GET after PATCH');

  isError(
    await api(`/namespaces/default/entities/${name}`, 'PUT', { metadata: { name: 'someone-else' } }),
    400,
    'PUT with another name',
  );
  isError(
    await api(`/namespaces/default/entities/${name}`, 'PUT', { metadata: { namespace: OTHER_NS } }),
    400,
    'PUT with another namespace',
  );
  isError(
    await api(`/namespaces/default/entities/${name}`, 'PATCH', { entity_class: 'spaceship' }),
    400,
    'PATCH to an invalid class',
  );
  isError(
    await api(`/namespaces/default/entities/${fresh('missing')}`, 'PATCH', { redact: [] }),
    404,
    'PATCH a missing entity',
  );
  isError(
    await api(`/namespaces/${fresh('nons')}/entities`, 'POST', { metadata: { name: fresh('x') } }),
    404,
    'POST in a missing namespace',
  );
});

test('entities: PUT replace of an existing entity still records created_by (like POST and the config resources)', async () => {
  const name = fresh('ent-createdby');
  created(await api('/namespaces/default/entities', 'POST', { metadata: { name } }), 'POST');
  created(
    await api(`/namespaces/default/entities/${name}`, 'PUT', { subscriptions: ['web'] }),
    'PUT replace',
  );
  const got = await api(`/namespaces/default/entities/${name}`);
  assert.is(
    got.body.metadata.created_by,
    'admin',
    `created_by after a PUT replace: ${JSON.stringify(got.body.metadata)}`,
  );
});

test('entities: wrapped form on POST and PUT', async () => {
  const name = fresh('ent-wrapped');
  created(
    await api('/namespaces/default/entities', 'POST', {
      type: 'Entity',
      api_version: 'core/v2',
      metadata: { name, namespace: 'default' },
      spec: { entity_class: 'proxy', subscriptions: ['wrapped'] },
    }),
    'POST wrapped',
  );
  let got = await api(`/namespaces/default/entities/${name}`);
  assert.equal(got.body.subscriptions, ['wrapped', `entity:${name}`]);
  created(
    await api(`/namespaces/default/entities/${name}`, 'PUT', {
      type: 'Entity',
      api_version: 'core/v2',
      metadata: { name },
      spec: { subscriptions: ['rewrapped'] },
    }),
    'PUT wrapped',
  );
  got = await api(`/namespaces/default/entities/${name}`);
  assert.equal(got.body.subscriptions, ['rewrapped', `entity:${name}`]);
});

test('entities: DELETE 204 then 404, and the entity takes its events with it', async () => {
  const name = fresh('ent-del');
  created(await api('/namespaces/default/entities', 'POST', { metadata: { name } }), 'POST');
  created(await api('/namespaces/default/events', 'POST', event(name, 'disk', 2)), 'event disk');
  created(await api('/namespaces/default/events', 'POST', event(name, 'cpu', 0)), 'event cpu');
  assert.is((await api(`/namespaces/default/events/${name}/disk`)).status, 200);
  await listUntil(`/namespaces/default/events/${name}`, (l) => l.length === 2, 'both events listed');

  assert.is((await api(`/namespaces/default/entities/${name}`, 'DELETE')).status, 204, 'DELETE');
  isError(await api(`/namespaces/default/entities/${name}`), 404, 'GET after DELETE');
  isError(await api(`/namespaces/default/entities/${name}`, 'DELETE'), 404, 'DELETE again');
  isError(await api(`/namespaces/default/events/${name}/disk`), 404, 'its disk event is gone');
  isError(await api(`/namespaces/default/events/${name}/cpu`), 404, 'its cpu event is gone');
  await listUntil(
    `/namespaces/default/events/${name}`,
    (l) => l.length === 0,
    'no events listed for the deleted entity',
  );
  await listUntil(
    '/namespaces/default/entities',
    (l) => !hasName(l, name),
    'the deleted entity leaves the list',
  );

  // The name is free again.
  created(await api('/namespaces/default/entities', 'POST', { metadata: { name } }), 'POST after DELETE');
  const again = await api(`/namespaces/default/entities/${name}`);
  assert.is(again.status, 200);
  isError(await api(`/namespaces/default/events/${name}/disk`), 404, 'a recreated entity has no old events');
});

// --- events -------------------------------------------------------------------------------------

test('events: POST on the collection is durable (201, then an immediate GET has it)', async () => {
  const entity = fresh('ev-ent');
  created(await api('/namespaces/default/events', 'POST', event(entity, 'disk', 1)), 'POST');
  const got = await api(`/namespaces/default/events/${entity}/disk`);
  assert.is(got.status, 200, JSON.stringify(got.body));
  assert.is(got.body.entity.metadata.name, entity);
  assert.is(got.body.check.metadata.name, 'disk');
  assert.is(got.body.check.metadata.namespace, 'default');
  assert.is(got.body.metadata.namespace, 'default');
  assert.is(got.body.check.status, 1);
  assert.is(got.body.check.output, 'status 1');
  assert.type(got.body.id, 'string');
  assert.match(got.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.type(got.body.timestamp, 'number');
  assert.is(got.body.check.state, 'failing');
  assert.ok(got.headers.get('etag'), 'ETag');
});

test('events: POST and PUT by name (201); URL and body names must agree (400)', async () => {
  const entity = fresh('ev-named');
  created(
    await api(`/namespaces/default/events/${entity}/cpu`, 'POST', { check: { status: 0, output: 'fine' } }),
    'POST by name, names from the URL',
  );
  let got = await api(`/namespaces/default/events/${entity}/cpu`);
  assert.is(got.status, 200);
  assert.is(got.body.entity.metadata.name, entity);
  assert.is(got.body.check.metadata.name, 'cpu');
  created(
    await api(`/namespaces/default/events/${entity}/cpu`, 'PUT', event(entity, 'cpu', 2)),
    'PUT by name, agreeing body',
  );
  got = await api(`/namespaces/default/events/${entity}/cpu`);
  assert.is(got.body.check.status, 2);
  assert.equal(
    got.body.check.history.map((h: Body) => h.status),
    [0, 2],
  );

  isError(
    await api(`/namespaces/default/events/${entity}/cpu`, 'PUT', event('another-entity', 'cpu')),
    400,
    'entity name differs from the URL',
  );
  isError(
    await api(`/namespaces/default/events/${entity}/cpu`, 'POST', event(entity, 'mem')),
    400,
    'check name differs from the URL',
  );
  isError(
    await api(`/namespaces/${fresh('nons')}/events`, 'POST', event(entity, 'cpu')),
    404,
    'a missing namespace',
  );
});

test('events: an event for an unknown entity creates a proxy entity', async () => {
  const entity = fresh('ev-proxy');
  created(
    await api('/namespaces/default/events', 'POST', {
      ...event(entity, 'ping', 0),
      entity: { metadata: { name: entity }, subscriptions: ['net'] },
    }),
    'POST',
  );
  const e = await api(`/namespaces/default/entities/${entity}`);
  assert.is(e.status, 200, `the entity exists: ${JSON.stringify(e.body)}`);
  assert.is(e.body.entity_class, 'proxy');
  assert.ok(e.body.subscriptions.includes(`entity:${entity}`), `subscriptions ${e.body.subscriptions}`);
  assert.ok(e.body.subscriptions.includes('net'));
  const ev = await api(`/namespaces/default/events/${entity}/ping`);
  assert.is(ev.body.entity.entity_class, 'proxy');
  await listUntil('/namespaces/default/entities', (l) => hasName(l, entity), 'the proxy entity is listed');
});

test('events: history, occurrences and watermark grow on repeated posts (0,1,1)', async () => {
  const entity = fresh('ev-hist');
  for (const status of [0, 1, 1])
    created(
      await api('/namespaces/default/events', 'POST', event(entity, 'disk', status)),
      `status ${status}`,
    );
  const got = await api(`/namespaces/default/events/${entity}/disk`);
  assert.equal(
    got.body.check.history.map((h: Body) => h.status),
    [0, 1, 1],
  );
  assert.ok(got.body.check.history.every((h: Body) => typeof h.executed === 'number' && h.executed > 0));
  assert.is(got.body.check.occurrences, 2);
  assert.is(got.body.check.occurrences_watermark, 2);
  assert.is(got.body.check.state, 'failing');
  assert.is(got.body.check.status, 1);
  assert.ok(got.body.check.last_ok > 0, 'last_ok from the first, OK result');

  created(await api('/namespaces/default/events', 'POST', event(entity, 'disk', 0)), 'status 0');
  const ok = await api(`/namespaces/default/events/${entity}/disk`);
  assert.is(ok.body.check.state, 'passing');
  assert.is(ok.body.check.occurrences, 1);
  assert.equal(
    ok.body.check.history.map((h: Body) => h.status),
    [0, 1, 1, 0],
  );
});

test('events: GET /events/:entity lists one entity; GET /events lists all namespaces', async () => {
  const a = fresh('ev-a');
  const b = fresh('ev-b');
  const c = fresh('ev-c');
  created(await api('/namespaces/default/events', 'POST', event(a, 'disk')), 'a/disk');
  created(await api('/namespaces/default/events', 'POST', event(a, 'cpu')), 'a/cpu');
  created(await api('/namespaces/default/events', 'POST', event(b, 'disk')), 'b/disk');
  created(await api(`/namespaces/${OTHER_NS}/events`, 'POST', event(c, 'disk')), 'c/disk elsewhere');

  const ofA = await listUntil(`/namespaces/default/events/${a}`, (l) => l.length === 2, `the events of ${a}`);
  assert.equal(ofA.map((e) => e.check.metadata.name).sort(), ['cpu', 'disk']);
  assert.ok(ofA.every((e) => e.entity.metadata.name === a));

  const ns = await listUntil(
    '/namespaces/default/events',
    (l) => hasEvent(l, a, 'disk') && hasEvent(l, b, 'disk'),
    'namespace list',
  );
  assert.not.ok(hasEvent(ns, c, 'disk', OTHER_NS), 'the other namespace event is not in the default list');
  await listUntil(
    '/events',
    (l) => hasEvent(l, a, 'cpu') && hasEvent(l, b, 'disk') && hasEvent(l, c, 'disk', OTHER_NS),
    'all-namespaces list',
  );
  const none = await api<Body[]>(`/namespaces/default/events/${fresh('nobody')}`);
  assert.is(none.status, 200);
  assert.equal(none.body, []);
});

test('events: DELETE 204 then 404', async () => {
  const entity = fresh('ev-del');
  created(await api('/namespaces/default/events', 'POST', event(entity, 'disk', 2)), 'POST');
  assert.is((await api(`/namespaces/default/events/${entity}/disk`, 'DELETE')).status, 204, 'DELETE');
  isError(await api(`/namespaces/default/events/${entity}/disk`), 404, 'GET after DELETE');
  isError(await api(`/namespaces/default/events/${entity}/disk`, 'DELETE'), 404, 'DELETE again');
  isError(
    await api(`/namespaces/default/events/${fresh('nobody')}/disk`, 'DELETE'),
    404,
    'DELETE for an unknown entity',
  );
  await listUntil(`/namespaces/default/events/${entity}`, (l) => l.length === 0, 'the event leaves the list');
  assert.is((await api(`/namespaces/default/entities/${entity}`)).status, 200, 'the entity stays');
});

test('events: a keepalive posted through the API is stored as a keepalive', async () => {
  const entity = fresh('ev-ka');
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: entity }, entity_class: 'proxy' },
      check: { metadata: { name: 'keepalive' }, status: 2, output: 'ignored', interval: 20, timeout: 120 },
    }),
    'POST keepalive',
  );
  const got = await api(`/namespaces/default/events/${entity}/keepalive`);
  assert.is(got.status, 200, JSON.stringify(got.body));
  assert.is(got.body.check.metadata.name, 'keepalive');
  assert.is(got.body.check.status, 0);
  assert.ok(
    got.body.check.output.startsWith(`Keepalive last sent from ${entity}`),
    `output ${got.body.check.output}`,
  );
  assert.equal(got.body.check.handlers, ['keepalive']);
  assert.is(got.body.check.interval, 20);
  assert.is(got.body.check.timeout, 120);
  assert.is(got.body.check.state, 'passing');
  const e = await api(`/namespaces/default/entities/${entity}`);
  assert.is(e.status, 200, 'the keepalive registered the entity');
  // Cleanup so no silence judgement fires while the suite runs.
  assert.is((await api(`/namespaces/default/entities/${entity}`, 'DELETE')).status, 204);
});

test('events: 400 without entity name, without check name, with wrong types', async () => {
  const entity = fresh('ev-bad');
  const cases: Array<[string, unknown]> = [
    ['no entity', { check: { metadata: { name: 'disk' }, status: 0 } }],
    ['entity without a name', { entity: { metadata: {} }, check: { metadata: { name: 'disk' }, status: 0 } }],
    ['no check', { entity: { metadata: { name: entity } } }],
    ['check without a name', { entity: { metadata: { name: entity } }, check: { metadata: {}, status: 0 } }],
    ['status "x"', event(entity, 'disk', 'x' as unknown as number)],
    ['negative status', event(entity, 'disk', -1)],
    ['output a number', { ...event(entity, 'disk'), check: { metadata: { name: 'disk' }, output: 42 } }],
    ['entity a string', { entity: 'web-01', check: { metadata: { name: 'disk' } } }],
    ['entity name with a space', event('bad name', 'disk')],
    ['check name with a slash', event(entity, 'a/b')],
    [
      'entity_class not a class',
      {
        entity: { metadata: { name: entity }, entity_class: 'robot' },
        check: { metadata: { name: 'disk' } },
      },
    ],
    ['timestamp a string', { ...event(entity, 'disk'), timestamp: 'now' }],
  ];
  for (const [what, body] of cases) isError(await api('/namespaces/default/events', 'POST', body), 400, what);
  isError(
    await api(`/namespaces/default/events/${entity}/disk`, 'PUT', { check: { status: 'x' } }),
    400,
    'PUT with status "x"',
  );
  isError(await api(`/namespaces/default/events/${entity}/disk`), 404, 'nothing was stored');
  isError(await api(`/namespaces/default/entities/${entity}`), 404, 'no entity was created');
});

test.run();
