// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { bare, handledIn, legacyApi, waitLegacyList } from '../harness/legacy.ts';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import { basic, coreApi, created, fresh } from '../harness/api.ts';
import {
  adminAuth,
  startAgent,
  startBackend,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
  type JsonResponse,
} from '../harness/index.ts';

// The legacy API's results and clients (docs/compatibility.md#legacy-api) on one backend with legacy
// credentials: POST /results by the legacy rules (visible through core/v2), /results views and
// deletion, POST /clients by the legacy client rules (an entity with its definition kept), the client
// views redacted, a client's history, DELETE /clients (202 at once, its events resolved to a real
// handler, then the entity gone from both APIs; invalidated clients refused), ttl_status.

let backend: Backend;
let agent: AgentProc | undefined;
let handled: string;
const api = coreApi(() => backend);
const AUTH = basic('foo', 'bar');
const HANDLER = 'legacy-cat';

const legacy = legacyApi(() => backend, AUTH);

function accepted(r: JsonResponse, what: string): void {
  assert.is(r.status, 202, `${what}: expected 202, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.equal(Object.keys(r.body), ['issued'], what);
  assert.ok(Math.abs(r.body.issued - Date.now() / 1000) < 5, `${what}: issued is now`);
}

const coreEvent = async (entity: string, check: string) => {
  const r = await api(`/namespaces/default/events/${entity}/${check}`);
  return r.status === 200 ? r.body : undefined;
};
const coreEntity = async (name: string) => {
  const r = await api(`/namespaces/default/entities/${name}`);
  return r.status === 200 ? r.body : undefined;
};

const waitList = (path: string, pred: (items: any[]) => boolean, what: string) =>
  waitLegacyList(legacy, path, pred, what);

const handledEvents = () => handledIn(handled);

test.before(async () => {
  backend = await startBackend({
    name: 'legacy-clients',
    extraArgs: ['--legacy-api-user', 'foo', '--legacy-api-password', 'bar'],
  });
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
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

test('without credentials every route is a 401 (no body)', async () => {
  for (const [path, method] of [
    ['/clients', 'GET'],
    ['/results', 'POST'],
    ['/events', 'GET'],
    ['/clients/x/history', 'GET'],
  ] as const) {
    const r = await legacy(path, method, method === 'POST' ? {} : undefined, {});
    bare(r, 401, `${method} ${path}`);
  }
});

test('POST /results refuses non-objects and results breaking the legacy rules (400, no body)', async () => {
  for (const body of ['nope', '[]', '"x"', '1', 'null'])
    bare(await legacy('/results', 'POST', body), 400, body);
  const ok = { name: 'disk', output: 'fine' };
  for (const [what, body] of [
    ['empty', {}],
    ['no output', { name: 'disk' }],
    ['float status', { ...ok, status: 1.5 }],
    ['string status', { ...ok, status: '1' }],
    ['bad name', { ...ok, name: 'a b' }],
    ['no name', { output: 'x' }],
    ['empty source', { ...ok, source: '' }],
    ['bad source', { ...ok, source: 'a b' }],
    ['ttl 0', { ...ok, ttl: 0 }],
    ['string ttl', { ...ok, ttl: '60' }],
    ['one flap threshold', { ...ok, low_flap_threshold: 5 }],
    ['handlers not an array', { ...ok, handlers: 'x' }],
    ['an interval of the wrong type', { ...ok, interval: 'often' }],
    ['an unsubstituted token as source', { ...ok, source: 'db-:::name:::' }],
  ] as const)
    bare(await legacy('/results', 'POST', body), 400, what);
});

test('a result POSTed with a source: a proxy client, visible through core/v2 and the /results views', async () => {
  const client = fresh('switch');
  accepted(
    await legacy('/results', 'POST', {
      name: 'ping',
      output: 'PING CRITICAL',
      status: 2,
      source: client,
      executed: 1,
      subscribers: ['client:other', 'network'],
      team: 'ops',
    }),
    'POST /results',
  );
  const ev = await coreEvent(client, 'ping');
  assert.ok(ev, 'visible through core/v2 once 202 was answered');
  assert.is(ev.check.status, 2);
  assert.is(ev.check.output, 'PING CRITICAL');
  assert.ok(ev.check.executed > 1, 'executed overwritten with now');
  assert.equal(ev.check.subscriptions, ['entity:other', 'network']);
  assert.is(ev.check.team, 'ops');
  assert.is(ev.entity.entity_class, 'proxy');
  const one = await legacy(`/results/${client}/ping`);
  assert.is(one.status, 200);
  assert.is(one.body.client, client);
  assert.equal(one.body.check.history, [2]);
  assert.is(one.body.check.name, 'ping');
  assert.equal(one.body.check.subscribers, ['client:other', 'network']);
  const mine = await legacy<any[]>(`/results/${client}`);
  assert.equal(
    mine.body.map((r) => r.check.name),
    ['ping'],
  );
  await waitList('/results', (l) => l.some((r) => r.client === client), 'in /results');
  const legacyEvent = await legacy(`/events/${client}/ping`);
  assert.is(legacyEvent.status, 200);
  assert.is(legacyEvent.body.client.type, 'proxy');
  assert.is(legacyEvent.body.client.keepalives, false);
});

test('a result POSTed through /results appears in the core/v2 event stream', async () => {
  const client = fresh('streamed');
  let text = '';
  let req: http.ClientRequest | undefined;
  await new Promise<void>((resolve, reject) => {
    req = http.get(
      `${backend.apiUrl}/api/core/v2/namespaces/default/events/stream?entity=${client}`,
      { headers: { Accept: 'text/event-stream', ...adminAuth }, agent: false },
      (res) => {
        assert.is(res.statusCode, 200);
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('error', () => {});
        resolve();
      },
    );
    req.on('error', reject);
  });
  try {
    accepted(
      await legacy('/results', 'POST', { name: 'web', output: 'HTTP 500', status: 2, source: client }),
      'post',
    );
    const data = await waitFor(
      () => text.split('\n').find((l) => l.startsWith('data:') && l.includes(client)),
      { timeoutMs: 5000, what: 'the event in the stream' },
    );
    const event = JSON.parse(data.slice('data:'.length));
    assert.is(event.check.metadata.name, 'web');
    assert.is(event.check.output, 'HTTP 500');
  } finally {
    req?.destroy();
  }
});

test('OK results are in /results (integer history), not in /events; unknown ones are [] or 404', async () => {
  const client = fresh('okres');
  accepted(await legacy('/results', 'POST', { name: 'a', output: 'ok', source: client }), 'ok');
  accepted(
    await legacy('/results', 'POST', { name: 'a', output: 'ok', source: client, status: 0 }),
    'ok again',
  );
  const r = await legacy(`/results/${client}/a`);
  assert.equal(r.body.check.history, [0, 0]);
  bare(await legacy(`/events/${client}/a`), 404, 'an OK result is no event');
  assert.equal((await legacy('/results/nobody-here')).body, []);
  bare(await legacy('/results/nobody-here/a'), 404, 'unknown');
  bare(await legacy('/results/foo%20bar/a'), 404, 'bad name');
  const put = await legacy('/results', 'PUT', {});
  bare(put, 405, 'PUT /results');
  assert.is(put.headers.get('allow'), 'GET, HEAD, POST');
  const pages = await waitList(`/results/${client}?limit=1&offset=0`, (l) => l.length === 1, 'a page');
  assert.is(pages[0].check.name, 'a');
  assert.equal((await legacy(`/results/${client}?limit=1&offset=5`)).body, []);
});

test('a result without source goes to its `client` field when that is a name, else to monitor-api', async () => {
  const check = fresh('apicheck');
  accepted(await legacy('/results', 'POST', { name: check, output: 'x', status: 1 }), 'no client');
  assert.ok(await coreEvent('monitor-api', check), 'the monitor-api entity has it');
  const client = fresh('named');
  accepted(await legacy('/results', 'POST', { name: check, output: 'x', client }), 'client field');
  assert.ok(await coreEvent(client, check), 'the named client has it');
  accepted(
    await legacy('/results', 'POST', { name: `${check}-2`, output: 'x', client: 'a b' }),
    'bad client',
  );
  assert.ok(await coreEvent('monitor-api', `${check}-2`), 'a bad client name falls back to monitor-api');
});

test('DELETE /results/:client/:check deletes the event (204), then 404 in both APIs', async () => {
  const client = fresh('delres');
  accepted(await legacy('/results', 'POST', { name: 'x', output: 'bad', status: 2, source: client }), 'post');
  bare(await legacy(`/results/${client}/x`, 'DELETE'), 204, 'delete');
  bare(await legacy(`/results/${client}/x`), 404, 'gone (legacy)');
  assert.is(await coreEvent(client, 'x'), undefined, 'gone (core/v2)');
  bare(await legacy(`/results/${client}/x`, 'DELETE'), 404, 'again');
  bare(await legacy('/results/nobody-here/x', 'DELETE'), 404, 'unknown client');
});

test('ttl arms the dead man switch and ttl_status is the status of its failure', async () => {
  const client = fresh('ttl');
  accepted(
    await legacy('/results', 'POST', { name: 'cron', output: 'ran', source: client, ttl: 5, ttl_status: 2 }),
    'post',
  );
  const failed = await waitFor(
    async () => {
      const e = await coreEvent(client, 'cron');
      return e?.check?.status !== 0 ? e : undefined;
    },
    { timeoutMs: 15000, intervalMs: 200, what: 'the TTL failure' },
  );
  assert.is(failed.check.status, 2);
  assert.match(failed.check.output, /^Last check execution was \d+ seconds ago$/);
});

test('POST /clients refuses bad definitions (400, no body)', async () => {
  for (const body of ['nope', '[]', '"x"', 'null']) bare(await legacy('/clients', 'POST', body), 400, body);
  const good = { name: 'db-01', address: '10.0.0.9' };
  for (const [what, body] of [
    ['empty', {}],
    ['no address', { name: 'db-01' }],
    ['address not a string', { ...good, address: 10 }],
    ['bad name', { ...good, name: 'db 01' }],
    ['newline in name', { ...good, name: 'db-01\n' }],
    ['name not a string', { ...good, name: 1 }],
    ['subscriptions not an array', { ...good, subscriptions: 'a' }],
    ['empty subscription', { ...good, subscriptions: [''] }],
    ['keepalives not a boolean', { ...good, keepalives: 'yes' }],
    ['redact not an array of strings', { ...good, redact: [1] }],
    ['socket port not an integer', { ...good, socket: { port: 'x' } }],
  ] as const)
    bare(await legacy('/clients', 'POST', body), 400, what);
});

test('POST /clients creates an entity; the client view has its attributes, client:<name>, redacted secrets', async () => {
  const name = fresh('db');
  const r = await legacy('/clients', 'POST', {
    name,
    address: '10.0.0.9',
    subscriptions: ['mysql'],
    environment: 'prod',
    service: { password: 'secret' },
  });
  assert.is(r.status, 201);
  assert.equal(r.body, { name });
  const c = await legacy(`/clients/${name}`);
  assert.is(c.status, 200);
  assert.is(c.body.name, name);
  assert.is(c.body.address, '10.0.0.9');
  assert.equal(c.body.subscriptions, ['mysql', `client:${name}`]);
  assert.is(c.body.environment, 'prod');
  assert.equal(c.body.service, { password: 'REDACTED' });
  assert.is(c.body.keepalives, false);
  assert.type(c.body.version, 'string');
  assert.ok(Math.abs(c.body.timestamp - Date.now() / 1000) < 5, 'timestamp is now');
  const e = await coreEntity(name);
  assert.is(e.entity_class, 'proxy');
  assert.equal(e.subscriptions, ['mysql', `entity:${name}`]);
  assert.is(e.legacy.environment, 'prod');
  accepted(await legacy('/results', 'POST', { name: 'q', output: 'x', status: 1, source: name }), 'an event');
  const ev = await legacy(`/events/${name}/q`);
  assert.equal(ev.body.client.service, { password: 'REDACTED' }, 'the event shows its client redacted');
  const list = await waitList('/clients', (l) => l.some((x) => x.name === name), 'in /clients');
  assert.equal(list.find((x) => x.name === name).service, { password: 'REDACTED' });
  const filtered = await legacy<any[]>(`/clients?filter.name=${name}&limit=5`);
  assert.equal(
    filtered.body.map((x) => x.name),
    [name],
  );
  assert.equal(JSON.parse(filtered.headers.get('x-pagination')!), { limit: 5, offset: 0, total: 1 });

  // Its own redact list replaces the default one.
  const own = fresh('own');
  await legacy('/clients', 'POST', {
    name: own,
    address: 'x',
    redact: ['supersecret'],
    supersecret: 's',
    password: 'p',
  });
  const o = await legacy(`/clients/${own}`);
  assert.is(o.body.supersecret, 'REDACTED');
  assert.is(o.body.password, 'p');
});

test('agents and REST entities are clients too; unknown names are 404; wrong methods 405', async () => {
  const name = fresh('rest');
  created(
    await api(`/namespaces/default/entities/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      entity_class: 'proxy',
      subscriptions: ['linux'],
    }),
    'entity',
  );
  const c = await legacy(`/clients/${name}`);
  assert.is(c.status, 200);
  assert.equal(c.body.subscriptions, ['linux', `client:${name}`]);
  bare(await legacy('/clients/nobody-here'), 404, 'unknown');
  bare(await legacy('/clients/foo%20bar'), 404, 'bad name');
  bare(await legacy('/clients/nobody-here', 'DELETE'), 404, 'delete unknown');
  const put = await legacy('/clients', 'PUT', {});
  bare(put, 405, 'PUT /clients');
  assert.is(put.headers.get('allow'), 'GET, HEAD, POST');
  const post = await legacy(`/clients/${name}`, 'POST', {});
  assert.is(post.headers.get('allow'), 'GET, HEAD, DELETE');
});

test('GET /clients/:name/history: [] for an unknown client, each check with integer history', async () => {
  assert.equal((await legacy('/clients/nobody-here/history')).body, []);
  const client = fresh('hist');
  accepted(await legacy('/results', 'POST', { name: 'a', output: 'x', status: 1, source: client }), 'a1');
  accepted(await legacy('/results', 'POST', { name: 'a', output: 'y', status: 0, source: client }), 'a2');
  await waitList(`/clients/${client}/history`, (l) => l.length === 1 && l[0].history.length === 2, 'history');
  const [h] = (await legacy<any[]>(`/clients/${client}/history`)).body;
  assert.is(h.check, 'a');
  assert.equal(h.history, [1, 0]);
  assert.is(h.last_status, 0);
  assert.type(h.last_execution, 'number');
  assert.is(h.last_result.output, 'y');
});

test('DELETE /clients/:name: 202 at once; its failing events resolved to the handler; then gone from both APIs', async () => {
  const client = fresh('gone');
  accepted(
    await legacy('/results', 'POST', {
      name: 'disk',
      output: 'bad',
      status: 2,
      source: client,
      handlers: [HANDLER],
    }),
    'failing',
  );
  accepted(await legacy('/results', 'POST', { name: 'cpu', output: 'ok', source: client }), 'ok');
  await waitList(`/results/${client}`, (l) => l.length === 2, 'both results listed');
  accepted(await legacy(`/clients/${client}`, 'DELETE'), 'DELETE /clients');
  const resolved = await waitFor(
    () => handledEvents().find((e) => e.client?.name === client && e.action === 'resolve'),
    { timeoutMs: 15000, what: 'the handler sees the resolution' },
  );
  assert.is(resolved.check.output, 'Resolving on request of the API');
  await waitFor(async () => (await coreEntity(client)) === undefined, {
    timeoutMs: 10000,
    what: 'entity gone',
  });
  assert.is(await coreEvent(client, 'disk'), undefined);
  assert.is(await coreEvent(client, 'cpu'), undefined);
  bare(await legacy(`/clients/${client}`), 404, 'client gone');
  await waitList(`/results/${client}`, (l) => l.length === 0, 'results gone');
  await waitList('/clients', (l) => !l.some((c) => c.name === client), 'not in /clients');
});

test('DELETE /clients/:name?invalidate=true&invalidate_expire=N: its later results are refused until it is defined again', async () => {
  const client = fresh('invalid');
  accepted(await legacy('/results', 'POST', { name: 'x', output: 'x', source: client }), 'post');
  accepted(await legacy(`/clients/${client}?invalidate=true&invalidate_expire=300`, 'DELETE'), 'delete');
  await waitFor(async () => (await coreEntity(client)) === undefined, {
    timeoutMs: 10000,
    what: 'entity gone',
  });
  // The legacy API accepts it (the reference's server dropped it), but nothing is stored.
  accepted(await legacy('/results', 'POST', { name: 'x', output: 'late', source: client }), 'a late result');
  bare(await legacy(`/results/${client}/x`), 404, 'not stored');
  assert.is(await coreEntity(client), undefined, 'not registered again');
  const rest = await api(`/namespaces/default/events/${client}/x`, 'POST', {
    check: { status: 0, output: 'x' },
  });
  assert.is(rest.status, 400, `REST refuses too: ${JSON.stringify(rest.body)}`);
  assert.match(rest.body.message, /invalidated/);
  // An operator who defines the client again ends the invalidation.
  assert.is((await legacy('/clients', 'POST', { name: client, address: 'x' })).status, 201);
  accepted(await legacy('/results', 'POST', { name: 'x', output: 'back', source: client }), 'a new result');
  assert.is((await legacy(`/results/${client}/x`)).body.check.output, 'back');
});

test('an agent is a client (keepalives true, its address); invalidated, its keepalives are refused', async () => {
  const name = fresh('agent');
  agent = await startAgent({ name, backendUrls: backend.agentUrl, keepaliveInterval: 1 });
  const c = await waitFor(
    async () => {
      const r = await legacy(`/clients/${name}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 15000, what: 'the agent registered' },
  );
  assert.is(c.keepalives, true);
  assert.type(c.address, 'string');
  assert.ok(c.subscriptions.includes(`client:${name}`));
  assert.ok(c.timestamp > 0);
  accepted(await legacy(`/clients/${name}?invalidate=true&invalidate_expire=300`, 'DELETE'), 'delete');
  await waitFor(
    () =>
      backend
        .logs()
        .some((l) => l.msg === 'invalid client signature' && l.entity === name && l.refused === 'keepalive'),
    { timeoutMs: 15000, what: 'a keepalive refused' },
  );
  assert.is(await coreEntity(name), undefined, 'the agent did not register again');
  await agent.stop();
  agent = undefined;
});

test.run();
