// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { bare, legacyApi } from '../harness/legacy.ts';
import {
  getJson,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { coreApi, created, fresh, type Body } from '../harness/api.ts';

// The legacy API's checks, ad hoc requests and silenced entries on one backend: legacy checks are
// the check configurations of the default namespace (made through the REST API), a request reaches a
// real agent, and a silenced entry made through either API is the one the other shows.

const MAX_SILENCE = 3600;
let backend: Backend;
let agent: AgentProc | undefined;
const api = coreApi(() => backend);

const legacy = legacyApi(() => backend);

const putCheck = async (name: string, body: Body) =>
  created(
    await api(`/namespaces/default/checks/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      command: 'true',
      publish: false,
      ...body,
    }),
    `PUT check ${name}`,
  );

const postEvent = async (entity: string, check: string, output = 'x') =>
  created(
    await api(`/namespaces/default/events/${entity}/${check}`, 'POST', { check: { status: 1, output } }),
    `event ${entity}/${check}`,
  );

/** Non-object and malformed bodies every POST route answers 400 with no body. */
const NOT_OBJECTS = ['not json', '', '[]', '"x"', '1', 'null', '[{"check":"x"}]'];

test.before(async () => {
  backend = await startBackend({
    name: 'legacy-checks',
    extraArgs: ['--max-silenced-expiry-time-allowed', String(MAX_SILENCE)],
  });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await agent?.stop();
  await backend?.stop();
});

test('checks made through the REST API are legacy checks: definition + name, subscribers the legacy way', async () => {
  await putCheck('tokens', { interval: 1, subscriptions: ['test', 'entity:web-01'], handlers: ['mail'] });
  await putCheck('tokens-rr', { interval: 60, subscriptions: ['test'], round_robin: true, timeout: 5 });
  await putCheck('tokens-agg', { interval: 1, subscriptions: ['all'], aggregate: 'web', ttl: 30 });

  const one = await legacy('/checks/tokens');
  assert.is(one.status, 200);
  assert.equal(one.body, {
    name: 'tokens',
    command: 'true',
    subscribers: ['test', 'client:web-01'],
    interval: 1,
    handlers: ['mail'],
    publish: false,
  });
  assert.equal((await legacy('/checks/tokens-rr')).body.subscribers, ['roundrobin:test']);
  assert.is((await legacy('/checks/tokens-agg')).body.aggregate, 'web');
  const all = await legacy<Body[]>('/checks');
  assert.is(all.status, 200);
  for (const n of ['tokens', 'tokens-rr', 'tokens-agg'])
    assert.ok(
      all.body.some((c) => c.name === n),
      `${n} in /checks`,
    );
  // HEAD is GET without the body.
  const head = await getJson(`${backend.legacyUrl}/checks/tokens`, { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.is(head.body, '');
});

test('GET /checks: filter.name=tokens&filter.interval=1 gives exactly one; limit/offset with X-Pagination', async () => {
  const filtered = await legacy<Body[]>('/checks?filter.name=tokens&filter.interval=1');
  assert.equal(
    filtered.body.map((c) => c.name),
    ['tokens'],
  );
  assert.equal((await legacy<Body[]>('/checks?filter.interval=1')).body.map((c) => c.name).sort(), [
    'tokens',
    'tokens-agg',
  ]);
  const total = (await legacy<Body[]>('/checks')).body.length;
  const page = await legacy<Body[]>('/checks?limit=1&offset=1');
  assert.is(page.body.length, 1);
  assert.equal(JSON.parse(page.headers.get('x-pagination')!), { limit: 1, offset: 1, total });
  assert.equal((await legacy('/checks?limit=2&offset=999')).body, []);
  // A limit that is not digits is ignored: the whole list, no header.
  const ignored = await legacy<Body[]>('/checks?limit=-1');
  assert.is(ignored.body.length, total);
  assert.is(ignored.headers.get('x-pagination'), null);
});

test('GET /checks/:name: unknown 404, bad name 404, both bare; wrong methods 405 with Allow', async () => {
  bare(await legacy('/checks/nope'), 404, 'unknown check');
  bare(await legacy('/checks/foo%20bar'), 404, 'a name with a space');
  bare(await legacy('/checks/a/b'), 404, 'a path under a check');
  const put = await legacy('/checks/tokens', 'PUT', {});
  bare(put, 405, 'PUT /checks/:name');
  assert.is(put.headers.get('allow'), 'GET, HEAD, DELETE');
  const post = await legacy('/checks', 'POST', {});
  bare(post, 405, 'POST /checks');
  assert.is(post.headers.get('allow'), 'GET, HEAD');
  const get = await legacy('/request');
  bare(get, 405, 'GET /request');
  assert.is(get.headers.get('allow'), 'POST');
});

test('DELETE /checks/:name: 202 {issued} always; the check results of every client go, the definition stays', async () => {
  const [a, b] = [fresh('del-a'), fresh('del-b')];
  await postEvent(a, 'tokens');
  await postEvent(b, 'tokens');
  await postEvent(a, 'other-check');
  const before = Math.floor(Date.now() / 1000);
  // The read model lists the events a moment after they are stored.
  await waitFor(async () => (await api(`/namespaces/default/events/${b}`)).body?.length === 1, {
    timeoutMs: 5000,
    what: 'the events in the lists',
  });
  const r = await legacy('/checks/tokens', 'DELETE');
  assert.is(r.status, 202);
  assert.equal(Object.keys(r.body), ['issued']);
  assert.ok(r.body.issued >= before && r.body.issued <= before + 5, `issued ${r.body.issued}`);
  for (const e of [a, b])
    await waitFor(async () => (await api(`/namespaces/default/events/${e}/tokens`)).status === 404, {
      timeoutMs: 10000,
      what: `${e}/tokens deleted`,
    });
  assert.is((await api(`/namespaces/default/events/${a}/other-check`)).status, 200, 'another check stays');
  assert.is((await legacy('/checks/tokens')).status, 200, 'the definition stays');
  const unknown = await legacy('/checks/never-defined', 'DELETE');
  assert.is(unknown.status, 202, 'an unknown check too');
  assert.type(unknown.body.issued, 'number');
});

test('POST /request: non-objects and wrong types 400, unknown check 404, all bare', async () => {
  for (const body of NOT_OBJECTS) bare(await legacy('/request', 'POST', body), 400, `body ${body}`);
  for (const body of [
    {},
    { check: 1 },
    { check: 'tokens', subscribers: 'test' },
    { check: 'tokens', reason: 1 },
    { check: 'tokens', creator: false },
  ])
    bare(await legacy('/request', 'POST', body), 400, JSON.stringify(body));
  bare(await legacy('/request', 'POST', { check: 'nope' }), 404, 'unknown check');
  bare(await legacy('/request', 'POST', { check: 'a b/c' }), 404, 'a check name nothing could have');
});

test('POST /request: 202 {issued}; a real agent runs the check, for its subscription, client:<name>, roundrobin:<sub>', async () => {
  const sub = fresh('legacy-sub');
  agent = await startAgent({
    name: fresh('legacy-agent'),
    backendUrls: backend.agentUrl,
    subscriptions: [sub],
  });
  const name = agent.name;
  await waitFor(async () => (await api(`/namespaces/default/entities/${name}`)).status === 200, {
    timeoutMs: 20000,
    what: `entity ${name}`,
  });
  const eventOutput = async (check: string) => {
    const r = await api(`/namespaces/default/events/${name}/${check}`);
    return r.status === 200 ? (r.body.check.output as string) : undefined;
  };

  await putCheck('req-sub', {
    command: 'echo by-subscription',
    interval: 60,
    subscriptions: [sub],
    aggregate: true,
  });
  const r = await legacy('/request', 'POST', { check: 'req-sub', reason: 'test', creator: 'me' });
  assert.is(r.status, 202);
  assert.equal(Object.keys(r.body), ['issued']);
  assert.match(
    await waitFor(() => eventOutput('req-sub'), { timeoutMs: 20000, what: 'the requested result' }),
    'by-subscription',
  );
  // The agent's result is a member of the aggregate its check's definition names.
  assert.is((await legacy('/aggregates/req-sub')).body.clients, 1);

  // A check of a subscription the agent lacks, requested for the agent itself the legacy way.
  await putCheck('req-client', { command: 'echo by-client', interval: 60, subscriptions: ['nobody-has-it'] });
  assert.is(
    (await legacy('/request', 'POST', { check: 'req-client', subscribers: [`client:${name}`] })).status,
    202,
  );
  assert.match(
    await waitFor(() => eventOutput('req-client'), {
      timeoutMs: 20000,
      what: 'the result for client:<name>',
    }),
    'by-client',
  );

  // roundrobin:<sub> is the subscription itself.
  await putCheck('req-rr', { command: 'echo by-roundrobin', interval: 60, subscriptions: ['nobody-has-it'] });
  assert.is(
    (await legacy('/request', 'POST', { check: 'req-rr', subscribers: [`roundrobin:${sub}`] })).status,
    202,
  );
  assert.match(
    await waitFor(() => eventOutput('req-rr'), { timeoutMs: 20000, what: 'the result for roundrobin:<sub>' }),
    'by-roundrobin',
  );
});

test('POST /silenced: non-objects, wrong types, bad names, no subscription or check, "*": 400 bare', async () => {
  for (const body of NOT_OBJECTS) bare(await legacy('/silenced', 'POST', body), 400, `body ${body}`);
  for (const body of [
    {},
    { subscription: '*' },
    { subscription: 'a b' },
    { check: 'a:b' },
    { check: 1 },
    { check: 'disk', expire: '60' },
    { check: 'disk', expire: 1.5 },
    { check: 'disk', begin: 'now' },
    { check: 'disk', reason: 1 },
    { check: 'disk', creator: [] },
    { check: 'disk', expire_on_resolve: 'true' },
    // Past --max-silenced-expiry-time-allowed, as through the REST API.
    { check: 'disk', expire: MAX_SILENCE + 1 },
  ])
    bare(await legacy('/silenced', 'POST', body), 400, JSON.stringify(body));
});

test('a silence made through the legacy API is the core/v2 one: client:<name> stored as entity:<name>', async () => {
  const host = fresh('web');
  const r = await legacy('/silenced', 'POST', {
    subscription: `client:${host}`,
    check: 'disk',
    expire: 300,
    reason: 'maintenance',
    creator: 'ops',
    expire_on_resolve: true,
  });
  bare(r, 201, 'POST /silenced');
  const core = await api(`/namespaces/default/silenced/entity:${host}:disk`);
  assert.is(core.status, 200);
  assert.is(core.body.subscription, `entity:${host}`);
  assert.is(core.body.check, 'disk');
  assert.is(core.body.expire, 300);
  assert.is(core.body.reason, 'maintenance');
  assert.is(core.body.creator, 'ops');
  assert.is(core.body.expire_on_resolve, true);

  const shown = await legacy(`/silenced/ids/client:${host}:disk`);
  assert.is(shown.status, 200);
  const { expire, begin, timestamp, ...rest } = shown.body;
  assert.equal(rest, {
    id: `client:${host}:disk`,
    subscription: `client:${host}`,
    check: 'disk',
    reason: 'maintenance',
    creator: 'ops',
    expire_on_resolve: true,
  });
  assert.ok(expire > 290 && expire <= 300, `expire is the seconds left: ${expire}`);
  assert.type(begin, 'number');
  assert.is(timestamp, begin);
  // No expire: the REST API's cap applies here too.
  bare(await legacy('/silenced', 'POST', { check: 'capped' }), 201, 'POST without expire');
  const capped = (await legacy('/silenced/ids/*:capped')).body;
  assert.ok(capped.expire > MAX_SILENCE - 10 && capped.expire <= MAX_SILENCE, `capped ${capped.expire}`);
  assert.is(capped.subscription, null);
});

test('a silence made through the REST API is listed by the legacy API the legacy way', async () => {
  const host = fresh('db');
  created(
    await api('/namespaces/default/silenced', 'POST', {
      metadata: { namespace: 'default' },
      subscription: `entity:${host}`,
      expire: 600,
    }),
    'REST silence',
  );
  const id = `client:${host}:*`;
  const byId = await legacy(`/silenced/ids/${id}`);
  assert.is(byId.status, 200);
  assert.is(byId.body.id, id);
  assert.is(byId.body.check, null);
  assert.ok(byId.body.expire > 590 && byId.body.expire <= 600);
  const bySub = await legacy<Body[]>(`/silenced/subscriptions/client:${host}`);
  assert.equal(
    bySub.body.map((s) => s.id),
    [id],
  );
  assert.ok((await legacy<Body[]>('/silenced')).body.some((s) => s.id === id));
});

test('GET /silenced lists: by check, pagination, filter; ids: exact, else the last ending with it; 404', async () => {
  for (const sub of ['lst-a', 'lst-b', 'lst-c'])
    bare(await legacy('/silenced', 'POST', { subscription: sub, check: 'lst' }), 201, sub);
  const byCheck = await legacy<Body[]>('/silenced/checks/lst');
  assert.equal(
    byCheck.body.map((s) => s.id),
    ['lst-a:lst', 'lst-b:lst', 'lst-c:lst'],
  );
  const page = await legacy<Body[]>('/silenced/checks/lst?limit=2&offset=1');
  assert.equal(
    page.body.map((s) => s.id),
    ['lst-b:lst', 'lst-c:lst'],
  );
  assert.equal(JSON.parse(page.headers.get('x-pagination')!), { limit: 2, offset: 1, total: 3 });
  const total = (await legacy<Body[]>('/silenced')).body.length;
  assert.equal(JSON.parse((await legacy('/silenced?limit=1')).headers.get('x-pagination')!), {
    limit: 1,
    offset: 0,
    total,
  });
  assert.equal(
    (await legacy<Body[]>('/silenced?filter.subscription=lst-b')).body.map((s) => s.id),
    ['lst-b:lst'],
  );
  assert.equal((await legacy('/silenced/subscriptions/nobody')).body, []);
  assert.equal((await legacy('/silenced/checks/nothing')).body, []);
  assert.is((await legacy('/silenced/ids/lst-a:lst')).body.id, 'lst-a:lst');
  assert.is((await legacy('/silenced/ids/c:lst')).body.id, 'lst-c:lst', 'the last entry ending with the id');
  bare(await legacy('/silenced/ids/none:none'), 404, 'unknown id');
  bare(await legacy('/silenced/ids/a%20b'), 404, 'an id outside the pattern');
  bare(await legacy('/silenced/subscriptions/a*b'), 404, 'a subscription outside the pattern');
  const wrong = await legacy('/silenced/ids/lst-a:lst', 'DELETE');
  bare(wrong, 405, 'DELETE an id');
  assert.is(wrong.headers.get('allow'), 'GET, HEAD');
  const put = await legacy('/silenced', 'PUT', {});
  bare(put, 405, 'PUT /silenced');
  assert.is(put.headers.get('allow'), 'GET, HEAD, POST');
});

test('POST /silenced/clear: by id or subscription/check (default *), 204; nothing deleted 404; 400', async () => {
  for (const body of [...NOT_OBJECTS, { id: 1 }, { subscription: 'a b' }, { check: 2 }])
    bare(await legacy('/silenced/clear', 'POST', body), 400, `body ${JSON.stringify(body)}`);
  const host = fresh('clr');
  bare(await legacy('/silenced', 'POST', { subscription: `client:${host}`, check: 'disk' }), 201, 'silence');
  bare(await legacy('/silenced', 'POST', { subscription: `client:${host}` }), 201, 'silence');
  bare(await legacy('/silenced/clear', 'POST', { id: `client:${host}:disk` }), 204, 'clear by id');
  assert.is((await api(`/namespaces/default/silenced/entity:${host}:disk`)).status, 404, 'gone from core/v2');
  bare(await legacy('/silenced/clear', 'POST', { id: `client:${host}:disk` }), 404, 'cleared already');
  bare(
    await legacy('/silenced/clear', 'POST', { subscription: `client:${host}` }),
    204,
    'check defaults to *',
  );
  bare(await legacy(`/silenced/ids/client:${host}:*`), 404, 'gone');
  bare(await legacy('/silenced/clear', 'POST', {}), 404, '*:* never existed');
  bare(await legacy('/silenced/clear', 'POST', { id: 'a/b' }), 404, 'an id naming another key');
  const get = await legacy('/silenced/clear');
  bare(get, 405, 'GET /silenced/clear');
  assert.is(get.headers.get('allow'), 'POST');
});

test.run();
