// suite-timeout: 180
import { connect } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  freePort,
  getJson,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { fresh } from '../harness/api.ts';
import { VERSION } from '../../proto/version.ts';

// The agent HTTP API with a real backend and a real agent: events posted to POST /events are
// stored by the backend (on the agent entity, or on a proxy entity), /healthz follows the backend
// connection, /version answers, and every kind of bad request gets a clear status and no crash.

const AGENT = 'api-agent';
let backend: Backend;
let agent: AgentProc;
const others: AgentProc[] = [];

const post = (body: unknown, headers: Record<string, string> = {}) =>
  getJson(`${agent.apiUrl}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function storedEvent(entity: string, check: string) {
  return waitFor(
    async () => {
      const r = await backend.get(`/api/core/v2/namespaces/default/events/${entity}/${check}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 15000, intervalMs: 100, what: `event ${entity}/${check}` },
  );
}

function badRequest(r: { status: number; body: any }, status: number, what: string, pattern?: RegExp) {
  assert.is(r.status, status, `${what}: status ${r.status} ${JSON.stringify(r.body)}`);
  assert.type(r.body, 'object', `${what}: JSON body`);
  assert.type(r.body.message, 'string', `${what}: message`);
  if (pattern) assert.match(r.body.message, pattern, what);
}

test.before(async () => {
  backend = await startBackend({ name: 'agent-api' });
  agent = await startAgent({ name: AGENT, backendUrls: backend.agentUrl });
  await waitFor(
    async () => {
      const r = await getJson(`${agent.apiUrl}/healthz`).catch(() => undefined);
      return r?.status === 200 ? r : undefined;
    },
    { timeoutMs: 20000, what: 'agent API healthy' },
  );
});

test.after(async () => {
  for (const a of others) await a.stop().catch(() => {});
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

test('GET /healthz: 200 ok while connected; GET /version: the version as JSON', async () => {
  const h = await getJson(`${agent.apiUrl}/healthz`);
  assert.is(h.status, 200);
  assert.is(h.body, 'ok');
  assert.match(h.headers.get('content-type') ?? '', /^text\/plain/);
  const v = await getJson(`${agent.apiUrl}/version`);
  assert.is(v.status, 200);
  assert.equal(v.body, { version: VERSION });
});

test('POST /events: 202, and the backend stores the event on the agent entity with the fields filled in', async () => {
  const check = fresh('api-check');
  const r = await post({
    check: { metadata: { name: check }, status: 1, output: 'disk 91% full', handlers: ['slack'] },
  });
  assert.is(r.status, 202, JSON.stringify(r.body));
  const ev = await storedEvent(AGENT, check);
  assert.is(ev.entity.metadata.name, AGENT);
  assert.is(ev.entity.entity_class, 'agent');
  assert.is(ev.check.status, 1);
  assert.is(ev.check.output, 'disk 91% full');
  assert.equal(ev.check.handlers, ['slack']);
  assert.is(ev.check.interval, 1);
  assert.ok(ev.check.executed > 0);
  assert.is(ev.metadata.namespace, 'default');
  assert.type(ev.id, 'string');
});

test('POST /events without a Content-Type is still read as JSON (curl -d sends form encoding)', async () => {
  const check = fresh('no-ctype');
  const r = await getJson(`${agent.apiUrl}/events`, {
    method: 'POST',
    body: JSON.stringify({ check: { metadata: { name: check }, status: 0, output: 'fine' } }),
  });
  assert.is(r.status, 202);
  await storedEvent(AGENT, check);
});

test('check.proxy_entity_name creates a proxy entity holding the event; the agent entity is unchanged', async () => {
  const proxy = fresh('router');
  const check = fresh('ping');
  const r = await post({
    check: { metadata: { name: check }, status: 2, output: 'unreachable', proxy_entity_name: proxy },
  });
  assert.is(r.status, 202, JSON.stringify(r.body));
  const ev = await storedEvent(proxy, check);
  assert.is(ev.entity.metadata.name, proxy);
  assert.is(ev.entity.entity_class, 'proxy');
  assert.is(ev.check.status, 2);
  const ent = await backend.get(`/api/core/v2/namespaces/default/entities/${proxy}`);
  assert.is(ent.status, 200);
  assert.is(ent.body.entity_class, 'proxy');
  const own = await backend.get(`/api/core/v2/namespaces/default/entities/${AGENT}`);
  assert.is(own.body.entity_class, 'agent');
  const ownEvent = await backend.get(`/api/core/v2/namespaces/default/events/${AGENT}/${check}`);
  assert.is(ownEvent.status, 404, 'not stored on the agent entity');

  // A second event for the same proxy goes to the existing entity (history grows).
  await post({ check: { metadata: { name: check }, status: 0, output: 'back', proxy_entity_name: proxy } });
  await waitFor(
    async () => {
      const e = await backend.get(`/api/core/v2/namespaces/default/events/${proxy}/${check}`);
      return e.body?.check?.status === 0 ? e.body : undefined;
    },
    { timeoutMs: 15000, what: 'second proxy event' },
  );
});

test('an event naming another entity is about a proxy entity too', async () => {
  const proxy = fresh('switch');
  const check = fresh('port');
  const r = await post({
    entity: { metadata: { name: proxy } },
    check: { metadata: { name: check }, status: 0, output: 'up' },
  });
  assert.is(r.status, 202);
  const ev = await storedEvent(proxy, check);
  assert.is(ev.entity.entity_class, 'proxy');
});

test('bad bodies: 400 with a JSON message, nothing stored', async () => {
  badRequest(await post('{"check": '), 400, 'truncated JSON', /malformed JSON/);
  badRequest(await post('not json at all'), 400, 'not JSON', /malformed JSON/);
  badRequest(await post(''), 400, 'empty body');
  badRequest(await post('[]'), 400, 'array');
  badRequest(await post('null'), 400, 'null');
  badRequest(await post('42'), 400, 'number');
  badRequest(await post({}), 400, 'no check', /check/);
  badRequest(await post({ check: { status: 0 } }), 400, 'no metadata', /check\.metadata/);
  badRequest(
    await post({ check: { metadata: {}, status: 0 } }),
    400,
    'no check name',
    /check\.metadata\.name/,
  );
  badRequest(
    await post({ check: { metadata: { name: '' } } }),
    400,
    'empty check name',
    /check\.metadata\.name/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'has space' } } }),
    400,
    'bad check name',
    /check\.metadata\.name/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, status: 'bad' } }),
    400,
    'status is a string',
    /check\.status/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, status: -1 } }),
    400,
    'negative status',
    /check\.status/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, status: 4294967296 } }),
    400,
    'status over 2^32-1',
    /check\.status must be a whole number from 0 to 4294967295/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, output: 42 } }),
    400,
    'output is a number',
    /check\.output/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, ttl: 'soon' } }),
    400,
    'ttl is a string',
    /check\.ttl/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, handlers: 'slack' } }),
    400,
    'handlers not a list',
    /check\.handlers/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, proxy_entity_name: 'bad name!' } }),
    400,
    'bad proxy name',
    /proxy_entity_name/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' }, proxy_entity_name: 7 } }),
    400,
    'proxy name not a string',
    /proxy_entity_name/,
  );
  badRequest(
    await post({ check: { metadata: { name: 'x' } }, entity: 'me' }),
    400,
    'entity not an object',
    /entity/,
  );
  const none = await backend.get(`/api/core/v2/namespaces/default/events/${AGENT}/x`);
  assert.is(none.status, 404);
});

test('oversized body: 413, and the API keeps answering', async () => {
  const big = JSON.stringify({ check: { metadata: { name: 'big' }, output: 'x'.repeat(600 * 1024) } });
  badRequest(await post(big), 413, 'oversize', /larger than/);
  const huge = 'x'.repeat(9 * 1024 * 1024);
  const r = await post(huge).catch((err: Error) => ({ status: 0, body: err.message }));
  assert.ok(r.status === 413 || r.status === 0, `huge body: ${r.status}`);
  assert.is((await getJson(`${agent.apiUrl}/healthz`)).status, 200);
});

test('a request whose body never completes is cut off by the 15 s read timeout', async () => {
  const t0 = Date.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const sock = connect({ port: agent.ports.api, host: '127.0.0.1' });
    let text = '';
    sock.setTimeout(30000, () => {
      sock.destroy();
      reject(new Error('the agent kept the connection open'));
    });
    sock.on('data', (d) => {
      text += d.toString();
    });
    sock.on('close', () => resolve(text));
    sock.on('error', () => resolve(text));
    sock.write(
      'POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"check":',
    );
  });
  assert.ok(Date.now() - t0 >= 14000, 'not before the timeout');
  assert.ok(answer === '' || answer.startsWith('HTTP/1.1 408'), answer);
  assert.is((await getJson(`${agent.apiUrl}/healthz`)).status, 200, 'still serving');
});

test('unknown paths: 404; wrong methods: 405 with Allow', async () => {
  badRequest(await getJson(`${agent.apiUrl}/nope`), 404, 'unknown path');
  badRequest(await getJson(`${agent.apiUrl}/events/extra`, { method: 'POST', body: '{}' }), 404, 'sub path');
  badRequest(await getJson(`${agent.apiUrl}/`), 404, 'root');
  const get = await getJson(`${agent.apiUrl}/events`);
  badRequest(get, 405, 'GET /events');
  assert.is(get.headers.get('allow'), 'POST');
  badRequest(await getJson(`${agent.apiUrl}/healthz`, { method: 'POST', body: '{}' }), 405, 'POST /healthz');
});

test('/healthz: 503 monitor backend unavailable when the agent has no backend', async () => {
  const dead = await freePort();
  const lonely = await startAgent({
    name: fresh('lonely'),
    backendUrls: `ws://127.0.0.1:${dead}`,
    extraArgs: ['--outbox-max-bytes', '65536'],
  });
  others.push(lonely);
  const h = await waitFor(async () => getJson(`${lonely.apiUrl}/healthz`).catch(() => undefined), {
    timeoutMs: 15000,
    what: 'lonely API',
  });
  assert.is(h.status, 503);
  assert.is(h.body, 'monitor backend unavailable');
  // Events are still accepted while disconnected (they wait for the connection) until the queue is
  // full; then the API answers 500 with the reason.
  const postTo = (output: string) =>
    getJson(`${lonely.apiUrl}/events`, {
      method: 'POST',
      body: JSON.stringify({ check: { metadata: { name: 'queued' }, status: 0, output } }),
    });
  assert.is((await postTo('first')).status, 202);
  let refused;
  for (let i = 0; i < 10 && !refused; i++) {
    const r = await postTo('z'.repeat(20 * 1024));
    if (r.status !== 202) refused = r;
  }
  assert.ok(refused, 'the full queue refuses an event');
  badRequest(refused!, 500, 'queue full', /full/);
  assert.is((await getJson(`${lonely.apiUrl}/healthz`)).status, 503, 'still serving');
});

test('--disable-api: nothing listens on the API port', async () => {
  const quiet = await startAgent({
    name: fresh('quiet'),
    backendUrls: backend.agentUrl,
    extraArgs: ['--disable-api'],
  });
  others.push(quiet);
  await quiet.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  const r = await getJson(`${quiet.apiUrl}/healthz`).then(
    (x) => x.status,
    (err: Error) => err.message,
  );
  assert.type(r, 'string', 'connection refused');
});

test('API port already in use: one clear log line and exit code 2', async () => {
  const clash = await startAgent({
    name: fresh('clash'),
    backendUrls: backend.agentUrl,
    ports: { ...agent.ports, socket: await freePort(), statsd: await freePort() },
  });
  others.push(clash);
  const exit = await waitFor(() => clash.proc.exit, { timeoutMs: 15000, what: 'clashing agent exit' });
  assert.is(exit.code, 2);
  assert.ok(
    clash.proc.lines().some((l) => /agent API: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/.test(l)),
    clash.proc.tail(10),
  );
  assert.is((await getJson(`${agent.apiUrl}/healthz`)).status, 200, 'first agent unaffected');
});

test.run();
