// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { bare, handledIn, legacyApi, waitLegacyList } from '../harness/legacy.ts';
import { mkdirSync } from 'node:fs';
import { coreApi, created, fresh } from '../harness/api.ts';
import { startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';

// The legacy API's events (docs/compatibility.md#legacy-api) on one backend: /events, /incidents,
// /events/:client[/:check] as views of the events the REST API stores (failing and flapping only,
// history as strings), resolution through DELETE /events/:client/:check and POST /resolve (a result
// through the entity actor that a real pipe handler with the `legacy` mutator sees as a resolve),
// and the routes' refusals (bad bodies, bad names, unknown ones, wrong methods), filters, pages.

let backend: Backend;
let handled: string;
const api = coreApi(() => backend);
const HANDLER = 'legacy-cat';

const legacy = legacyApi(() => backend);

const post = (entity: string, check: string, body: Record<string, unknown>) =>
  api(`/namespaces/default/events/${entity}/${check}`, 'POST', {
    check: { output: 'out', interval: 60, ...body },
  });

const coreEvent = async (entity: string, check: string) => {
  const r = await api(`/namespaces/default/events/${entity}/${check}`);
  return r.status === 200 ? r.body : undefined;
};

const waitList = (path: string, pred: (items: any[]) => boolean, what: string) =>
  waitLegacyList(legacy, path, pred, what);

/** The legacy-mutated payloads the file handler received. */
const handledEvents = () => handledIn(handled);

test.before(async () => {
  backend = await startBackend({ name: 'legacy-events' });
  handled = tempDir('legacy-handled');
  mkdirSync(handled, { recursive: true });
  const r = await api(`/namespaces/default/handlers/${HANDLER}`, 'PUT', {
    metadata: { name: HANDLER, namespace: 'default' },
    type: 'pipe',
    command: `cat > "$(mktemp -p ${handled} ev.XXXXXX)"`,
    mutator: 'legacy',
  });
  assert.ok(r.status === 201 || r.status === 200, `handler: ${r.status} ${JSON.stringify(r.body)}`);
});

test.after(async () => {
  await backend?.stop();
});

test('an event POSTed through core/v2 is listed at /events, /incidents and /events/:client with string history', async () => {
  const client = fresh('web');
  created(await post(client, 'disk', { status: 0 }), 'ok result');
  created(await post(client, 'disk', { status: 2, output: 'DISK CRITICAL', environment: 'prod' }), 'failure');
  const list = await waitList(
    '/events',
    (l) => l.some((e) => e.client.name === client),
    'the event in /events',
  );
  const e = list.find((x) => x.client.name === client);
  assert.is(e.check.name, 'disk');
  assert.equal(e.check.history, ['0', '2']);
  assert.is(e.check.status, 2);
  assert.is(e.check.output, 'DISK CRITICAL');
  assert.is(e.check.environment, 'prod', 'custom attributes kept');
  assert.is(e.check.type, 'standard');
  assert.is(e.action, 'create');
  assert.is(e.occurrences, 1);
  assert.type(e.id, 'string');
  assert.type(e.last_ok, 'number');
  assert.type(e.last_state_change, 'number');
  assert.is(e.silenced, false);
  assert.equal(e.silenced_by, []);
  assert.ok(e.client.subscriptions.includes(`client:${client}`), 'client:<name> shown');
  const incidents = await legacy<any[]>('/incidents');
  assert.ok(
    incidents.body.some((x) => x.client.name === client),
    '/incidents is an alias',
  );
  const mine = await legacy<any[]>(`/events/${client}`);
  assert.is(mine.status, 200);
  assert.equal(
    mine.body.map((x) => x.check.name),
    ['disk'],
  );
  const one = await legacy(`/events/${client}/disk`);
  assert.is(one.status, 200);
  assert.equal(one.body, e);
});

test('an OK event is absent from /events and a 404 at /events/:client/:check', async () => {
  const client = fresh('okay');
  created(await post(client, 'cpu', { status: 0 }), 'ok');
  created(await post(client, 'mem', { status: 1 }), 'warning');
  await waitList(`/events/${client}`, (l) => l.length === 1, 'one failing event of the client');
  const r = await legacy<any[]>(`/events/${client}`);
  assert.equal(
    r.body.map((x) => x.check.name),
    ['mem'],
  );
  bare(await legacy(`/events/${client}/cpu`), 404, 'an OK event');
});

test('unknown clients and checks: [] for a client, 404 for a check; bad names are 404', async () => {
  const r = await legacy('/events/nobody-here');
  assert.is(r.status, 200);
  assert.equal(r.body, []);
  bare(await legacy('/events/nobody-here/disk'), 404, 'unknown client');
  bare(await legacy('/events/foo%20bar'), 404, 'a space in a name');
  bare(await legacy('/events/foo%20bar/disk'), 404, 'a space in a client name');
  bare(await legacy('/events/a/b/c'), 404, 'too deep');
  bare(await legacy('/events/nobody-here/disk', 'DELETE'), 404, 'resolving an unknown event');
});

test('wrong methods are 405 with Allow', async () => {
  const put = await legacy('/events', 'PUT', {});
  bare(put, 405, 'PUT /events');
  assert.is(put.headers.get('allow'), 'GET, HEAD');
  const postOne = await legacy('/events/a/b', 'POST', {});
  bare(postOne, 405, 'POST /events/:c/:k');
  assert.is(postOne.headers.get('allow'), 'GET, HEAD, DELETE');
  const getResolve = await legacy('/resolve');
  bare(getResolve, 405, 'GET /resolve');
  assert.is(getResolve.headers.get('allow'), 'POST');
  const head = await legacy('/incidents', 'HEAD');
  assert.is(head.status, 200);
  assert.is(head.body, '');
});

test('pagination (limit, offset, X-Pagination, past the end) and filter.check.status on /events/:client', async () => {
  const client = fresh('paged');
  for (const [check, status] of [
    ['a', 1],
    ['b', 2],
    ['c', 1],
  ] as const)
    created(await post(client, check, { status }), check);
  await waitList(`/events/${client}`, (l) => l.length === 3, 'three events');
  const page = await legacy<any[]>(`/events/${client}?limit=2&offset=1`);
  assert.equal(
    page.body.map((x) => x.check.name),
    ['b', 'c'],
  );
  assert.equal(JSON.parse(page.headers.get('x-pagination')!), { limit: 2, offset: 1, total: 3 });
  const past = await legacy<any[]>(`/events/${client}?limit=2&offset=10`);
  assert.equal(past.body, []);
  const noLimit = await legacy<any[]>(`/events/${client}?offset=1`);
  assert.is(noLimit.body.length, 3, 'offset alone does not paginate');
  assert.is(noLimit.headers.get('x-pagination'), null);
  const filtered = await legacy<any[]>(`/events/${client}?filter.check.status=1`);
  assert.equal(
    filtered.body.map((x) => x.check.name),
    ['a', 'c'],
  );
  const global = await legacy<any[]>(`/events?filter.client.name=${client}&filter.check.status=2`);
  assert.equal(
    global.body.map((x) => x.check.name),
    ['b'],
  );
});

test('POST /resolve refuses bodies that are not objects or lack client and check (400, no body)', async () => {
  for (const body of ['not json', '[]', '"x"', '3', 'null'])
    bare(await legacy('/resolve', 'POST', body), 400, `body ${body}`);
  bare(await legacy('/resolve', 'POST', {}), 400, 'empty object');
  bare(await legacy('/resolve', 'POST', { client: 'a' }), 400, 'no check');
  bare(await legacy('/resolve', 'POST', { check: 'a' }), 400, 'no client');
  bare(await legacy('/resolve', 'POST', { client: 1, check: 'a' }), 400, 'a number as client');
  bare(await legacy('/resolve', 'POST', { client: 'a', check: ['b'] }), 400, 'an array as check');
  bare(await legacy('/resolve', 'POST', { client: 'nobody-here', check: 'disk' }), 404, 'unknown client');
  bare(await legacy('/resolve', 'POST', { client: 'foo bar', check: 'disk' }), 404, 'a bad client name');
  const client = fresh('known');
  created(await post(client, 'disk', { status: 2 }), 'failure');
  bare(await legacy('/resolve', 'POST', { client, check: 'other' }), 404, 'unknown check');
});

test('POST /resolve: a real pipe handler with the legacy mutator gets the resolve; the event leaves /events', async () => {
  const client = fresh('resolved');
  created(await post(client, 'disk', { status: 2, handlers: [HANDLER], ttl: 30 }), 'failure');
  await waitFor(() => handledEvents().find((e) => e.client?.name === client && e.action === 'create'), {
    timeoutMs: 15000,
    what: 'the handler sees the failure',
  });
  const r = await legacy('/resolve', 'POST', { client, check: 'disk' });
  assert.is(r.status, 202);
  assert.equal(Object.keys(r.body), ['issued']);
  assert.ok(Math.abs(r.body.issued - Date.now() / 1000) < 5, 'issued is now, in seconds');
  const resolved = await waitFor(
    () => handledEvents().find((e) => e.client?.name === client && e.action === 'resolve'),
    { timeoutMs: 15000, what: 'the handler sees the resolution' },
  );
  assert.is(resolved.check.output, 'Resolving on request of the API');
  assert.is(resolved.check.status, 0);
  assert.is(resolved.check.force_resolve, true);
  assert.equal(resolved.check.history, ['2', '0']);
  bare(await legacy(`/events/${client}/disk`), 404, 'resolved');
  await waitList(`/events/${client}`, (l) => l.length === 0, 'gone from /events');
  const stored = await coreEvent(client, 'disk');
  assert.is(stored.check.status, 0);
  assert.is(stored.check.state, 'passing');
  assert.is(stored.check.ttl, undefined, 'the forced resolution disarms the TTL');
});

test('DELETE /events/:client/:check resolves too (202 {issued}); a flapping event is listed and resolving ends flapping', async () => {
  const client = fresh('flappy');
  const thresholds = { low_flap_threshold: 10, high_flap_threshold: 30 };
  for (let i = 0; i < 21; i++)
    created(await post(client, 'net', { status: i % 2, ...thresholds }), `result ${i}`);
  const last = await coreEvent(client, 'net');
  assert.is(last.check.status, 0);
  assert.is(last.check.state, 'flapping');
  const [e] = await waitList(`/events/${client}`, (l) => l.length === 1, 'the flapping event listed');
  assert.is(e.action, 'flapping');
  const r = await legacy(`/events/${client}/net`, 'DELETE');
  assert.is(r.status, 202);
  assert.type(r.body.issued, 'number');
  const after = await coreEvent(client, 'net');
  assert.is(after.check.state, 'passing', 'a forced resolution ends flapping');
  assert.is(after.check.output, 'Resolving on request of the API');
  bare(await legacy(`/events/${client}/net`), 404, 'no longer listed');
  bare(await legacy(`/events/${client}/net`, 'DELETE'), 404, 'nothing left to resolve');
});

test.run();
