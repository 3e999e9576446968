import { createSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';
import { ListenError, type Listener } from '../../agent/listen.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { startLegacyInputs } from '../../agent/legacy/sockets/index.ts';
import { MAX_BODY_BYTES } from '../../agent/legacy/sockets/http.ts';
import { MAX_MESSAGE_BYTES, WATCHDOG_MS } from '../../agent/legacy/sockets/tcp.ts';
import { freePorts, waitFor } from '../harness/index.ts';
import { legacySettings, type LegacySettings } from '../../proto/legacy/client-definition.ts';

// The legacy client's sockets on real loopback ports, with an in-memory sink in place of the outbox:
// the TCP protocol's timing (watchdog, answers after the sink), UDP, and the HTTP socket's statuses,
// reason phrases and bodies. The same cases through a real agent and backend are in
// test/e2e/legacy-client-sockets.test.ts.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logs: Record<string, any>[] = [];
const log = createLogger('debug', {}, (line) => logs.push(JSON.parse(line)));
const received: Event[] = [];
/** What the sink does with the next submits: take, wait, or refuse. */
let mode: 'take' | 'slow' | 'refuse' = 'take';
let release: (() => void) | undefined;
const sink = {
  async submit(e: Event) {
    if (mode === 'refuse') throw new Error('the outbox is full');
    if (mode === 'slow') await new Promise<void>((r) => (release = r));
    received.push(e);
  },
};
let socketPort: number;
let httpPort: number;
let listeners: Listener[] = [];
/** A definition as the agent runs it: validated, with the defaults, by the definition's own rules. */
function settings(
  socketPort: number,
  httpPort: number,
  http: object = {},
  socket: object = {},
): LegacySettings {
  const r = legacySettings({
    client: {
      name: 'unit-client',
      address: '127.0.0.1',
      subscriptions: [],
      socket: { bind: '127.0.0.1', port: socketPort, ...socket },
      http_socket: { port: httpPort, user: 'admin', password: 'pa:ss', ...http },
    },
  });
  if (!r.ok) throw new Error(r.message);
  return r.settings;
}

function tcp(parts: (string | number)[], end = false): Promise<{ answer: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const sock = connect({ port: socketPort, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    sock.setTimeout(10_000, () => reject(new Error(`no answer; got "${answer}"`)));
    sock.on('data', (d) => (answer += d.toString()));
    sock.on('error', reject);
    // The agent writes its answer and closes: our side sees the end of its stream.
    sock.on('end', () => {
      resolve({ answer, ms: Date.now() - t0 });
      sock.destroy();
    });
    sock.on('close', () => resolve({ answer, ms: Date.now() - t0 }));
    sock.on('connect', async () => {
      for (const p of parts) {
        if (typeof p === 'number') await sleep(p);
        else sock.write(p);
      }
      if (end) sock.end();
    });
  });
}
const http = (path: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${httpPort}${path}`, init);
/** One request written as is; the whole answer as text. */
function rawHttp(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port: httpPort, host: '127.0.0.1' }, () => sock.write(request));
    let text = '';
    sock.on('data', (d) => (text += d.toString()));
    sock.on('error', reject);
    sock.on('close', () => resolve(text));
  });
}
const logged = (pred: (l: Record<string, any>) => boolean) => logs.some(pred);

test.before(async () => {
  [socketPort, httpPort] = (await freePorts(2)) as [number, number];
  listeners = await startLegacyInputs({
    settings: settings(socketPort, httpPort),
    sink,
    connected: () => true,
    log,
  });
});
test.after(async () => {
  release?.();
  await Promise.all(listeners.map((l) => l.close()));
});
test.before.each(() => {
  mode = 'take';
  received.length = 0;
});

test('TCP: ping gets pong and the connection is closed', async () => {
  assert.equal((await tcp(['ping'])).answer, 'pong');
  assert.equal((await tcp([' ping\n'])).answer, 'pong');
});

test('TCP: a result is answered ok without a newline; an array gives one event per element', async () => {
  assert.is((await tcp(['{"name":"one","output":"o"}'])).answer, 'ok');
  assert.is((await tcp(['[{"name":"a","output":"o"},{"name":"b","output":"o","status":1}]'])).answer, 'ok');
  assert.equal(
    received.map((e) => e.check!.metadata.name),
    ['one', 'a', 'b'],
  );
});

test('TCP: ok only once the sink has the result; a refusing sink gets error', async () => {
  mode = 'slow';
  let settled = false;
  const pending = tcp(['{"name":"slow","output":"o"}']).then((r) => ((settled = true), r));
  await waitFor(() => release !== undefined, { timeoutMs: 2000, what: 'the submit' });
  await sleep(WATCHDOG_MS + 200);
  assert.not.ok(settled, 'no answer while the result is not queued (nor the watchdog)');
  release!();
  release = undefined;
  assert.is((await pending).answer, 'ok');
  mode = 'refuse';
  assert.is((await tcp(['{"name":"refused","output":"o"}'])).answer, 'error');
  assert.ok(logged((l) => l.msg === 'check result not queued' && l.error === 'the outbox is full'));
});

test('TCP: partial JSON completed within the watchdog is ok; each chunk restarts it', async () => {
  const r = await tcp(['{"name":"split",', 300, '"output":', 300, '"o"}']);
  assert.is(r.answer, 'ok');
  assert.ok(r.ms >= 600, 'longer than one watchdog period overall');
  assert.is(received[0]!.check!.metadata.name, 'split');
});

test('TCP: partial JSON then silence is invalid after the watchdog, logged as a warning', async () => {
  const r = await tcp(['{"name":"stuck",']);
  assert.is(r.answer, 'invalid');
  assert.ok(r.ms >= WATCHDOG_MS - 20 && r.ms < WATCHDOG_MS + 1000, `${r.ms} ms`);
  assert.ok(logged((l) => l.level === 'warn' && /within 500 ms/.test(l.reason)));
  assert.is(received.length, 0);
});

test('TCP: a sender closing its side before a complete message gets invalid at once', async () => {
  const r = await tcp(['{"name":'], true);
  assert.is(r.answer, 'invalid');
  assert.ok(r.ms < WATCHDOG_MS, `${r.ms} ms`);
});

test('TCP: an invalid result and an array with one invalid element are invalid, nothing taken, message logged', async () => {
  assert.is((await tcp(['{"name":"x","output":"o","status":"1"}'])).answer, 'invalid');
  assert.ok(logged((l) => l.reason === 'check status must be an integer' && l.transport === 'tcp'));
  assert.is((await tcp(['[{"name":"ok1","output":"o"},{"name":"x"}]'])).answer, 'invalid');
  assert.ok(logged((l) => l.reason === 'check output must be a string' && l.index === 1));
  assert.is(received.length, 0);
});

test('TCP: a message past the size limit is invalid', async () => {
  const big = '{"name":"big","output":"' + 'x'.repeat(MAX_MESSAGE_BYTES);
  assert.is((await tcp([big])).answer, 'invalid');
  assert.is((await tcp(['ping'])).answer, 'pong', 'still serving');
});

test('UDP: a datagram is a result, never answered; bad JSON logged at error; ping ignored', async () => {
  const udp = createSocket('udp4');
  let answered = false;
  udp.on('message', () => (answered = true));
  const send = (s: string) =>
    new Promise<void>((r, j) => udp.send(s, socketPort, '127.0.0.1', (e) => (e ? j(e) : r())));
  await send('ping');
  await send('{"name":"bad json"');
  await send('{"name":"udp-one","output":"o","source":"proxy-1"}');
  await waitFor(() => received.length === 1, { timeoutMs: 3000, what: 'the UDP result' });
  await sleep(200);
  udp.close();
  assert.not.ok(answered);
  assert.is((received[0]!.check as any).proxy_entity_name, 'proxy-1');
  assert.ok(
    logged((l) => l.level === 'error' && l.transport === 'udp' && l.msg === 'check result is not valid JSON'),
  );
});

test('HTTP: POST /results 202 "OK" {"response":"ok"}, then 400, 415, invalid result 400 with its message', async () => {
  const post = (body: string | undefined, type?: string) =>
    http('/results', {
      method: 'POST',
      ...(body !== undefined ? { body } : {}),
      headers: type ? { 'content-type': type } : {},
    });
  let r = await post('[{"name":"h1","output":"o"},{"name":"h2","output":"o"}]', 'application/json');
  assert.is(r.status, 202);
  assert.is(r.statusText, 'OK');
  assert.is(r.headers.get('content-type'), 'application/json');
  assert.is(await r.text(), '{"response":"ok"}');
  assert.is(received.length, 2);
  r = await post('{"name":', 'application/json; charset=utf-8');
  assert.is(r.status, 400);
  assert.is(r.statusText, 'Failed to parse JSON body');
  assert.is(await r.text(), '{"response":"Failed to parse JSON body"}');
  r = await post('{"name":"h","output":"o"}', 'text/plain');
  assert.is(r.status, 415);
  assert.is(r.statusText, 'Only application/json content type accepted');
  assert.is(await r.text(), '{"response":"Invalid content type"}');
  const raw = await rawHttp(
    'POST /results HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n',
  );
  assert.match(raw, /^HTTP\/1.1 415 /, 'no body at all (no length, not chunked)');
  r = await post('{"name":"bad name","output":"o"}', 'application/json');
  assert.is(r.status, 400);
  assert.is(await r.text(), '{"response":"check name cannot contain spaces or special characters"}');
  r = await post('{"output":"' + 'x'.repeat(MAX_BODY_BYTES) + '"}', 'application/json');
  assert.is(r.status, 413);
  mode = 'refuse';
  r = await post('{"name":"h","output":"o"}', 'application/json');
  assert.is(r.status, 500);
  assert.match(await r.text(), 'not queued');
});

test('HTTP: /brew, 405, 404 and 401 with their reason phrases and headers', async () => {
  let r = await http('/brew');
  assert.is(r.status, 418);
  assert.is(r.statusText, "I'm a teapot");
  assert.is(await r.text(), '{"response":"I\'m a teapot!"}');
  r = await http('/info', { method: 'POST' });
  assert.is(r.status, 405);
  assert.is(await r.text(), '{"response":"Valid methods for this endpoint: [\\"GET\\"]"}');
  r = await http('/nowhere?x=1');
  assert.is(r.status, 404);
  assert.is(r.headers.get('content-type'), 'application/json');
  assert.equal(Object.keys(((await r.json()) as any).endpoints), ['/info', '/results', '/settings', '/brew']);
  r = await http('/settings');
  assert.is(r.status, 401);
  assert.is(r.statusText, 'Unauthorized');
  assert.is(r.headers.get('www-authenticate'), 'Basic realm="Sensu Client Restricted Area"');
  assert.is(
    await r.text(),
    '{"response":"You must be authenticated using your http_options user and password settings"}',
  );
});

test('HTTP: /settings redacted with credentials (a password with a colon), raw with redacted=false', async () => {
  const auth = { authorization: `Basic ${Buffer.from('admin:pa:ss').toString('base64')}` };
  let r = await http('/settings', { headers: auth });
  assert.is(r.status, 200);
  assert.is(((await r.json()) as any).client.http_socket.password, 'REDACTED');
  r = await http('/settings?redacted=FALSE', { headers: auth });
  assert.is(((await r.json()) as any).client.http_socket.password, 'pa:ss');
});

test('HTTP: /info shows the version and whether the agent is connected', async () => {
  const body = (await (await http('/info')).json()) as any;
  assert.type(body.sensu.version, 'string');
  assert.equal(body.monitor, body.sensu);
  assert.equal(body.transport, { name: 'monitor', connected: true });
});

test('protect_all_endpoints guards /info and /results, not /brew; enabled:false starts nothing; a taken port is a ListenError', async () => {
  const [s, h] = (await freePorts(2)) as [number, number];
  const guarded = await startLegacyInputs({
    settings: settings(s, h, { protect_all_endpoints: true }),
    sink,
    connected: () => false,
    log,
  });
  try {
    const at = (p: string, init?: RequestInit) => fetch(`http://127.0.0.1:${h}${p}`, init);
    assert.is((await at('/info')).status, 401);
    assert.is(
      (await at('/results', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }))
        .status,
      401,
    );
    assert.is((await at('/brew')).status, 418);
    const auth = { authorization: `Basic ${Buffer.from('admin:pa:ss').toString('base64')}` };
    assert.equal(((await (await at('/info', { headers: auth })).json()) as any).transport.connected, false);
  } finally {
    await Promise.all(guarded.map((l) => l.close()));
  }
  const none = settings(s, h, { enabled: false }, { enabled: false });
  assert.equal(await startLegacyInputs({ settings: none, sink, connected: () => true, log }), []);
  const holder = createServer();
  await new Promise<void>((r) => holder.listen(h, '127.0.0.1', r));
  try {
    const err = await startLegacyInputs({ settings: settings(s, h), sink, connected: () => true, log }).catch(
      (e) => e,
    );
    assert.instance(err, ListenError);
    assert.match((err as Error).message, 'legacy HTTP socket');
    // The TCP socket started before it was closed again: its port is free.
    const again = await startLegacyInputs({
      settings: settings(s, h, { enabled: false }),
      sink,
      connected: () => true,
      log,
    });
    await Promise.all(again.map((l) => l.close()));
  } finally {
    holder.close();
  }
});

test.run();
