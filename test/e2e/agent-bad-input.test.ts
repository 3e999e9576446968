// suite-timeout: 180
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';

// Everything an agent port can be sent that is wrong: bad handshakes get an HTTP status with a JSON
// body, bad frames close the socket with a WebSocket code and reason, and the backend keeps serving.

let backend: Backend;
const sockets: WebSocket[] = [];

const basic = (user: string, pw: string) => 'Basic ' + Buffer.from(`${user}:${pw}`).toString('base64');
const goodHeaders = (name: string): Record<string, string> => ({
  'Monitor-Namespace': 'default',
  'Monitor-AgentName': name,
  'Monitor-Subscriptions': 'linux',
  Authorization: basic('agent', 'P@ssw0rd!'),
});

/** Opens a socket; resolves with the open socket or the refused handshake's status and body. */
function connect(
  headers: Record<string, string>,
  path = '/',
): Promise<{ ws?: WebSocket; status?: number; body?: any }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(backend.agentUrl + path, { headers });
    sockets.push(ws);
    ws.on('open', () => resolve({ ws }));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => {
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* text */
        }
        resolve({ status: res.statusCode, body });
      });
    });
    ws.on('error', () => {});
  });
}

const closed = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
const frame = (type: string, payload: unknown) =>
  Buffer.from(`${type}\n${typeof payload === 'string' ? payload : JSON.stringify(payload)}`);
const keepalive = (name: string) => ({
  timestamp: Math.floor(Date.now() / 1000),
  id: randomUUID(),
  entity: { metadata: { name, namespace: 'default' }, entity_class: 'agent', subscriptions: ['linux'] },
  check: { metadata: { name: 'keepalive' }, interval: 1, timeout: 5, ttl: 0 },
});

async function stillHealthy() {
  const h = await backend.health();
  assert.is(h.status, 200, 'backend still healthy');
}

test.before(async () => {
  backend = await startBackend({ name: 'bad-input' });
});
test.after(async () => {
  for (const ws of sockets) ws.terminate();
  await backend?.stop();
});

test('wrong password: 401 bad credentials', async () => {
  const r = await connect({ ...goodHeaders('a1'), Authorization: basic('agent', 'nope') });
  assert.is(r.status, 401);
  assert.equal(r.body, { message: 'bad credentials', code: 5 });
});

test('unknown user and missing credentials: 401', async () => {
  const unknown = await connect({ ...goodHeaders('a1'), Authorization: basic('nobody', 'x') });
  assert.is(unknown.status, 401);
  const { Authorization: _omit, ...noAuth } = goodHeaders('a1');
  const missing = await connect(noAuth);
  assert.is(missing.status, 401);
  assert.is(missing.body.message, 'missing credentials');
  const garbled = await connect({ ...goodHeaders('a1'), Authorization: 'Basic !!!notbase64' });
  assert.is(garbled.status, 401);
});

test('missing or invalid handshake headers: 400 naming the header', async () => {
  const { 'Monitor-AgentName': _n, ...noName } = goodHeaders('a1');
  const r = await connect(noName);
  assert.is(r.status, 400);
  assert.match(r.body.message, /Monitor-AgentName/);
  const { 'Monitor-Namespace': _ns, ...noNs } = goodHeaders('a1');
  assert.match((await connect(noNs)).body.message, /Monitor-Namespace/);
  const bad = await connect({ ...goodHeaders('bad name with spaces') });
  assert.is(bad.status, 400);
});

test('unknown namespace: 404; wrong path: 404; plain HTTP: 426', async () => {
  const r = await connect({ ...goodHeaders('a1'), 'Monitor-Namespace': 'nowhere' });
  assert.is(r.status, 404);
  assert.is(r.body.message, 'namespace "nowhere" not found');
  assert.is((await connect(goodHeaders('a1'), '/other')).status, 404);
  const plain = await fetch(backend.agentUrl.replace('ws:', 'http:') + '/');
  assert.is(plain.status, 426);
  assert.ok(typeof ((await plain.json()) as { message?: unknown }).message === 'string');
});

test('a garbage frame closes the session with 1007 and a reason', async () => {
  const { ws } = await connect(goodHeaders('garbage-1'));
  const c = closed(ws!);
  ws!.send(Buffer.from('this is not a frame'));
  const { code, reason } = await c;
  assert.is(code, 1007);
  assert.match(reason, /malformed frame/);
  await stillHealthy();
});

test('a text frame of invalid UTF-8 closes the session with 1007 and a reason', async () => {
  const { ws } = await connect(goodHeaders('garbage-utf8'));
  const c = closed(ws!);
  // A lone continuation byte in the payload of an otherwise well-formed keepalive frame.
  ws!.send(Buffer.concat([Buffer.from('keepalive\n{"x":"'), Buffer.from([0x80]), Buffer.from('"}')]), {
    binary: false,
  });
  const { code, reason } = await c;
  assert.is(code, 1007);
  assert.match(reason, /UTF-8/);
  await stillHealthy();
});

test('an unknown frame type and a non-JSON payload close with 1007', async () => {
  for (const data of [
    frame('launch_missiles', {}),
    Buffer.from('keepalive\n{not json'),
    frame('keepalive', { entity: 'wrong types', check: 7 }),
  ]) {
    const { ws } = await connect(goodHeaders('garbage-2'));
    const c = closed(ws!);
    ws!.send(data);
    assert.is((await c).code, 1007);
  }
  await stillHealthy();
});

test('an oversized frame closes with 1009 (message too big)', async () => {
  const { ws } = await connect(goodHeaders('big-1'));
  const c = closed(ws!);
  ws!.send(Buffer.concat([Buffer.from('event\n'), Buffer.alloc(2 * 1024 * 1024, 0x41)]));
  assert.is((await c).code, 1009);
  await stillHealthy();
});

test('an invalid event with an id is refused by an ack, the session stays open', async () => {
  const { ws } = await connect(goodHeaders('refused-1'));
  ws!.send(frame('keepalive', keepalive('refused-1')));
  const acks: any[] = [];
  ws!.on('message', (d: Buffer) => {
    const s = d.toString();
    if (s.startsWith('ack\n')) acks.push(JSON.parse(s.slice(4)));
  });
  ws!.send(frame('event', { id: 'ev-bad', check: { metadata: { name: 'disk' }, status: 'very bad' } }));
  ws!.send(
    frame('event', { id: 'ev-good', check: { metadata: { name: 'disk' }, status: 1, output: 'warn' } }),
  );
  await waitFor(async () => acks.length >= 2 || undefined, { timeoutMs: 10000, what: 'two acks' });
  const bad = acks.find((a) => a.id === 'ev-bad');
  const good = acks.find((a) => a.id === 'ev-good');
  assert.is(bad.ok, false);
  assert.is(bad.code, 'invalid');
  assert.match(bad.message, /status/);
  assert.is(good.ok, true);
  assert.is(ws!.readyState, WebSocket.OPEN);
  const stored = await backend.get('/api/core/v2/namespaces/default/events/refused-1/disk');
  assert.is(stored.status, 200);
  assert.is(stored.body.check.status, 1);
});

test("a keepalive cannot register another entity than the session's", async () => {
  const { ws } = await connect(goodHeaders('honest-1'));
  ws!.send(frame('keepalive', keepalive('impostor-1')));
  await waitFor(
    async () =>
      (await backend.get('/api/core/v2/namespaces/default/entities/honest-1')).status === 200 || undefined,
    { timeoutMs: 10000, what: 'the session entity' },
  );
  assert.is((await backend.get('/api/core/v2/namespaces/default/entities/impostor-1')).status, 404);
});

test('random bytes from many connections do not crash the backend', async () => {
  for (let i = 0; i < 40; i++) {
    const { ws } = await connect(goodHeaders(`fuzz-${i}`));
    const c = closed(ws!);
    ws!.send(randomBytes(1 + Math.floor(Math.random() * 4000)));
    ws!.send(randomBytes(64), { binary: false });
    await c;
  }
  await stillHealthy();
  // A well-behaved agent still gets through.
  const { ws } = await connect(goodHeaders('after-fuzz'));
  ws!.send(frame('keepalive', keepalive('after-fuzz')));
  await waitFor(
    async () =>
      (await backend.get('/api/core/v2/namespaces/default/events/after-fuzz/keepalive')).status === 200 ||
      undefined,
    { timeoutMs: 10000, what: 'the keepalive after the fuzzing' },
  );
});

test.run();
