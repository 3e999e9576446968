// suite-timeout: 240
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { fresh } from '../harness/api.ts';
import { legacyApi } from '../harness/legacy.ts';
import { startBackend, startLegacyClient, waitFor, type Backend } from '../harness/index.ts';

// The legacy client's sockets run by monitor-agent with a real backend (reference 2.1, 2.2;
// docs/compatibility.md#legacy-client): the TCP socket's protocol (ping, a result or an array per
// connection, the 0.5 s watchdog, `ok`/`invalid` without a newline), UDP, the HTTP socket's
// endpoints, statuses and bodies, and results kept through a backend outage.

const CLIENT = 'sockets-client';
let backend: Backend;
type LegacyClientProc = Awaited<ReturnType<typeof startLegacyClient>>;
let client: LegacyClientProc;
let guarded: LegacyClientProc;
const legacy = legacyApi(() => backend);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString('base64')}` });
const AUTH = basic('sock-user:sock:pass');

/** Writes the parts (a number is a pause in ms) and reads until the agent closes; with the time taken. */
function tcp(parts: (string | number)[], port = client.socketPort): Promise<{ answer: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const sock = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    const done = () => {
      resolve({ answer, ms: Date.now() - t0 });
      sock.destroy();
    };
    sock.setTimeout(15_000, () => {
      sock.destroy();
      reject(new Error(`no answer; got "${answer}"`));
    });
    sock.on('data', (d) => (answer += d.toString()));
    sock.on('error', reject);
    sock.on('end', done);
    sock.on('close', done);
    sock.on('connect', async () => {
      for (const p of parts) {
        if (typeof p === 'number') await sleep(p);
        else sock.write(p);
      }
    });
  });
}

/** Sends one datagram; resolves with whatever came back within `waitMs` (nothing is expected). */
function udp(payload: string, waitMs = 0): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const got: string[] = [];
    s.on('message', (m) => got.push(m.toString()));
    s.send(payload, client.socketPort, '127.0.0.1', (err) => {
      if (err) reject(err);
      else
        setTimeout(() => {
          s.close();
          resolve(got);
        }, waitMs);
    });
  });
}

const http = (path: string, init: RequestInit = {}, base = client.httpUrl) => fetch(`${base}${path}`, init);
const postJson = (body: string, headers: Record<string, string> = {}, base = client.httpUrl) =>
  http(
    '/results',
    { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } },
    base,
  );

async function storedEvent(entity: string, check: string, timeoutMs = 15_000) {
  return waitFor(
    async () => {
      const r = await backend.get(`/api/core/v2/namespaces/default/events/${entity}/${check}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `event ${entity}/${check}` },
  );
}
const eventStatus = async (entity: string, check: string) =>
  (await backend.get(`/api/core/v2/namespaces/default/events/${entity}/${check}`)).status;

/** The agent's log line refusing a result with this reason. */
const refusal = (reason: string) =>
  waitFor(
    () =>
      client.proc
        .jsonLines()
        .find((l) => l.msg === 'invalid check result' && l.reason === reason && l.level === 'warn'),
    { timeoutMs: 3000, intervalMs: 50, what: `the log line "${reason}"` },
  );

test.before(async () => {
  backend = await startBackend({ name: 'legacy-client-sockets' });
  client = await startLegacyClient({
    name: CLIENT,
    backendUrls: backend.agentUrl,
    client: {
      http_socket: { user: 'sock-user', password: 'sock:pass' },
      service: { api_key: 'key-in-settings', plain: 'shown' },
    },
  });
  guarded = await startLegacyClient({
    name: 'sockets-guarded',
    backendUrls: backend.agentUrl,
    client: { http_socket: { user: 'u', password: 'p', protect_all_endpoints: true } },
  });
  for (const c of [client, guarded]) {
    await c.proc.waitForLine((l) => l.includes('connected to backend'), 20_000);
    await c.proc.waitForLine((l) => l.includes('legacy client HTTP socket listening'), 5000);
  }
});

test.after(async () => {
  await client?.stop().catch(() => {});
  await guarded?.stop().catch(() => {});
  await backend?.stop();
});

test('TCP: ping (trimmed) gets pong and the connection is closed', async () => {
  assert.is((await tcp(['ping'])).answer, 'pong');
  assert.is((await tcp([' ping\r\n'])).answer, 'pong');
});

test('TCP: a result is answered ok without a newline and stored as the client event, executed kept', async () => {
  const check = fresh('tcp-one');
  const r = await tcp([JSON.stringify({ name: check, output: 'disk 91%', status: 1, executed: 1700000000 })]);
  assert.is(r.answer, 'ok');
  const ev = await storedEvent(CLIENT, check);
  assert.is(ev.entity.metadata.name, CLIENT);
  assert.is(ev.check.status, 1);
  assert.is(ev.check.output, 'disk 91%');
  assert.is(ev.check.executed, 1700000000);
});

test('TCP: an array of results is answered ok and each one stored', async () => {
  const [a, b] = [fresh('tcp-arr'), fresh('tcp-arr')];
  const r = await tcp([
    JSON.stringify([
      { name: a, output: 'a' },
      { name: b, output: 'b', status: 2 },
    ]),
  ]);
  assert.is(r.answer, 'ok');
  assert.is((await storedEvent(CLIENT, a)).check.status, 0, 'status 0 by default');
  assert.is((await storedEvent(CLIENT, b)).check.status, 2);
});

test('TCP: partial JSON completed by a second write within 0.5 s is ok', async () => {
  const check = fresh('tcp-split');
  const json = JSON.stringify({ name: check, output: 'split' });
  const r = await tcp([json.slice(0, 12), 300, json.slice(12)]);
  assert.is(r.answer, 'ok');
  await storedEvent(CLIENT, check);
});

test('TCP: partial JSON then silence is answered invalid after about 0.5 s', async () => {
  const r = await tcp(['{"name":"never-finished","output":']);
  assert.is(r.answer, 'invalid');
  assert.ok(r.ms >= 450 && r.ms < 2000, `${r.ms} ms`);
  const line = client.proc
    .jsonLines()
    .find((l) => l.msg === 'invalid check result' && /500 ms/.test(l.reason));
  assert.is(line?.level, 'warn', 'the expiry is a warning');
});

test('TCP: bad JSON is answered invalid', async () => {
  assert.is((await tcp(['this is not json'])).answer, 'invalid');
  assert.is((await tcp(['{"name": }'])).answer, 'invalid');
  assert.is((await tcp(['"a string"'])).answer, 'invalid', 'JSON, but not a result');
});

test('TCP: each rule broken is answered invalid, its message in the agent log', async () => {
  const ok = { name: 'rules', output: 'o' };
  const cases: [object, string][] = [
    [{}, 'check output must be a string'],
    [{ ...ok, status: 1.0 + 0.5 }, 'check status must be an integer'],
    [{ ...ok, executed: 'yesterday' }, 'check executed timestamp must be an integer'],
    [{ output: 'o' }, 'check name must be a string'],
    [{ ...ok, name: 'with space' }, 'check name cannot contain spaces or special characters'],
    [{ ...ok, handler: 1 }, 'check handler must be a string'],
    [{ ...ok, handlers: 'mail' }, 'check handlers must be an array'],
    [{ ...ok, handlers: ['mail', 2] }, 'check handlers must each be a string'],
    [{ ...ok, aggregate: 'a b' }, 'check aggregate must be a string (name) or boolean'],
    [{ ...ok, aggregates: ['ok', 3] }, 'check aggregates must be an array of strings (names)'],
    [{ ...ok, high_flap_threshold: 20 }, 'check low flap threshold must be an integer'],
    [
      { ...ok, low_flap_threshold: 5, high_flap_threshold: '20' },
      'check high flap threshold must be an integer',
    ],
    [{ ...ok, truncate_output: 'yes' }, 'check truncate_output must be a boolean'],
    [{ ...ok, truncate_output_length: 0 }, 'check truncate_output_length must be an integer greater than 0'],
    [
      { ...ok, source: 'bad source' },
      'check source cannot contain spaces, special characters, or invalid tokens',
    ],
    [{ ...ok, source: '' }, 'check source cannot contain spaces, special characters, or invalid tokens'],
    [{ ...ok, ttl: 'long' }, 'check ttl must be an integer'],
    [{ ...ok, ttl: 0 }, 'check ttl must be greater than 0'],
    [{ ...ok, ttl: 60, ttl_status: 'critical' }, 'check ttl_status must be an integer'],
  ];
  for (const [doc, message] of cases) {
    const from = client.proc.lineCount;
    assert.is((await tcp([JSON.stringify(doc)])).answer, 'invalid', message);
    const line = await client.proc.waitForLine((l) => l.includes('invalid check result'), 3000, {
      fromLine: from,
    });
    assert.is(JSON.parse(line).reason, message);
  }
});

test('TCP: an array with one invalid element is invalid and none of it is stored', async () => {
  const [first, marker] = [fresh('arr-first'), fresh('arr-marker')];
  const r = await tcp([JSON.stringify([{ name: first, output: 'o' }, { name: 'second' }])]);
  assert.is(r.answer, 'invalid');
  await refusal('check output must be a string');
  // Results of one agent are delivered in order: once a later one is stored, the first would be too.
  assert.is((await tcp([JSON.stringify({ name: marker, output: 'after' })])).answer, 'ok');
  await storedEvent(CLIENT, marker);
  assert.is(await eventStatus(CLIENT, first), 404);
});

test('UDP: a datagram gets no answer and its result is delivered; bad JSON is logged at error, ping ignored', async () => {
  const check = fresh('udp-one');
  assert.equal(await udp('ping', 300), [], 'ping is ignored');
  assert.equal(await udp('{"name":', 300), [], 'bad JSON: silence');
  assert.equal(await udp(JSON.stringify({ name: check, output: 'by udp', status: 1 }), 300), []);
  assert.is((await storedEvent(CLIENT, check)).check.output, 'by udp');
  const line = client.proc.jsonLines().find((l) => l.msg === 'check result is not valid JSON');
  assert.is(line?.level, 'error');
  assert.is(line?.transport, 'udp');
});

test('source makes a proxy client, visible through the legacy API GET /clients/<source>', async () => {
  const source = fresh('switch');
  const check = fresh('port-1');
  assert.is((await tcp([JSON.stringify({ name: check, output: 'down', status: 2, source })])).answer, 'ok');
  const ev = await storedEvent(source, check);
  assert.is(ev.entity.entity_class, 'proxy');
  const c = await waitFor(
    async () => {
      const r = await legacy(`/clients/${source}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 10_000, what: 'the proxy client in the legacy API' },
  );
  assert.is(c.name, source);
  const viaUdp = fresh('udp-proxy');
  await udp(JSON.stringify({ name: check, output: 'up', source: viaUdp }));
  await storedEvent(viaUdp, check);
});

test('HTTP GET /info: the version under sensu and monitor, and the transport connected', async () => {
  const r = await http('/info');
  assert.is(r.status, 200);
  assert.is(r.headers.get('content-type'), 'application/json');
  const body = (await r.json()) as any;
  assert.type(body.sensu.version, 'string');
  assert.equal(body.monitor, body.sensu);
  assert.is(body.transport.name, 'monitor');
  assert.is(body.transport.connected, true);
});

test('HTTP POST /results: 202 "OK" {"response":"ok"} for an object or an array; 400 bad JSON; 415; invalid result 400', async () => {
  const [a, b, c] = [fresh('http-one'), fresh('http-arr'), fresh('http-arr')];
  let r = await postJson(JSON.stringify({ name: a, output: 'posted', status: 1 }));
  assert.is(r.status, 202);
  assert.is(r.statusText, 'OK');
  assert.is(await r.text(), '{"response":"ok"}');
  assert.is((await storedEvent(CLIENT, a)).check.output, 'posted');
  r = await postJson(
    JSON.stringify([
      { name: b, output: 'b' },
      { name: c, output: 'c' },
    ]),
  );
  assert.is(r.status, 202);
  await storedEvent(CLIENT, b);
  await storedEvent(CLIENT, c);
  r = await postJson('{"name":');
  assert.is(r.status, 400);
  assert.is(r.statusText, 'Failed to parse JSON body');
  assert.is(await r.text(), '{"response":"Failed to parse JSON body"}');
  r = await http('/results', {
    method: 'POST',
    body: '{"name":"x","output":"o"}',
    headers: { 'content-type': 'text/plain' },
  });
  assert.is(r.status, 415);
  assert.is(r.statusText, 'Only application/json content type accepted');
  assert.is(r.headers.get('content-type'), 'application/json');
  assert.is(await r.text(), '{"response":"Invalid content type"}');
  r = await postJson('{"name":"x","output":"o","source":""}');
  assert.is(r.status, 400);
  assert.is(
    await r.text(),
    '{"response":"check source cannot contain spaces, special characters, or invalid tokens"}',
  );
  assert.ok(
    client.proc.jsonLines().some((l) => l.msg === 'invalid check result' && l.transport === 'http'),
    'logged',
  );
});

test('HTTP GET /settings: 401 without or with wrong credentials; redacted with them; raw with redacted=false', async () => {
  for (const headers of [{}, basic('sock-user:wrong'), basic('other:sock:pass')]) {
    const r = await http('/settings', { headers });
    assert.is(r.status, 401);
    assert.is(r.statusText, 'Unauthorized');
    assert.is(r.headers.get('www-authenticate'), 'Basic realm="Sensu Client Restricted Area"');
    assert.is(r.headers.get('content-type'), 'application/json');
    assert.is(
      await r.text(),
      '{"response":"You must be authenticated using your http_options user and password settings"}',
    );
  }
  let body = (await (await http('/settings', { headers: AUTH })).json()) as any;
  assert.is(body.client.name, CLIENT);
  assert.is(body.client.service.api_key, 'REDACTED');
  assert.is(body.client.service.plain, 'shown');
  assert.is(body.client.http_socket.password, 'REDACTED');
  body = (await (await http('/settings?redacted=False', { headers: AUTH })).json()) as any;
  assert.is(body.client.service.api_key, 'key-in-settings');
  assert.is(body.client.http_socket.password, 'sock:pass');
  body = (await (await http('/settings?redacted=true', { headers: AUTH })).json()) as any;
  assert.is(body.client.service.api_key, 'REDACTED');
});

test('HTTP GET /settings is 401 whatever is sent when no user and password are configured', async () => {
  // The guarded client has credentials; a client without any is the harness's default.
  const bare = await startLegacyClient({ name: 'sockets-bare', backendUrls: backend.agentUrl });
  try {
    await bare.proc.waitForLine((l) => l.includes('legacy client HTTP socket listening'), 20_000);
    assert.is((await http('/settings', { headers: basic(':') }, bare.httpUrl)).status, 401);
    assert.is((await http('/settings', {}, bare.httpUrl)).status, 401);
  } finally {
    await bare.stop();
  }
});

test('HTTP /brew 418, wrong method 405 and unknown path 404 with the exact bodies', async () => {
  let r = await http('/brew');
  assert.is(r.status, 418);
  assert.is(r.statusText, "I'm a teapot");
  assert.is(await r.text(), '{"response":"I\'m a teapot!"}');
  r = await http('/info', { method: 'POST', body: '{}' });
  assert.is(r.status, 405);
  assert.is(await r.text(), '{"response":"Valid methods for this endpoint: [\\"GET\\"]"}');
  r = await http('/results');
  assert.is(r.status, 405);
  assert.is(await r.text(), '{"response":"Valid methods for this endpoint: [\\"POST\\"]"}');
  r = await http('/nothing/here?x=1');
  assert.is(r.status, 404);
  assert.is(r.headers.get('content-type'), 'application/json');
  assert.is(
    await r.text(),
    '{"endpoints":{"/info":{"help":"Sensu client information","methods":["GET"]},' +
      '"/results":{"help":"Send check JSON results here","methods":["POST"]},' +
      '"/settings":{"help":"Get redacted Sensu settings (requires basic auth). Use ?redacted=false if you want the setting unredacted.","methods":["GET"]},' +
      '"/brew":{"help":"Ask Sensu to brew a cup of joe (try it!)","methods":["GET"]}}}',
  );
});

test('protect_all_endpoints: /info and /results need credentials, /brew, 404 and 405 do not', async () => {
  const base = guarded.httpUrl;
  const check = fresh('guarded');
  assert.is((await http('/info', {}, base)).status, 401);
  assert.is((await postJson(JSON.stringify({ name: check, output: 'o' }), {}, base)).status, 401);
  assert.is((await http('/brew', {}, base)).status, 418);
  assert.is((await http('/nope', {}, base)).status, 404);
  assert.is((await http('/info', { method: 'DELETE' }, base)).status, 405);
  const auth = basic('u:p');
  assert.is((await http('/info', { headers: auth }, base)).status, 200);
  assert.is((await postJson(JSON.stringify({ name: check, output: 'o' }), auth, base)).status, 202);
  await storedEvent('sockets-guarded', check);
  assert.is((await http('/info')).status, 200, 'the other client does not protect /info');
});

test('results acknowledged while the backend is stopped are delivered once it returns', async () => {
  const [viaTcp, viaHttp, viaUdp] = [fresh('outage-tcp'), fresh('outage-http'), fresh('outage-udp')];
  await backend.stop();
  await waitFor(async () => !((await (await http('/info')).json()) as any).transport.connected, {
    timeoutMs: 10_000,
    what: '/info saying the transport is down',
  });
  assert.is((await tcp([JSON.stringify({ name: viaTcp, output: 'while away', status: 2 })])).answer, 'ok');
  assert.is((await postJson(JSON.stringify({ name: viaHttp, output: 'while away' }))).status, 202);
  await udp(JSON.stringify({ name: viaUdp, output: 'while away' }));
  backend = await startBackend({ ...backend.options, init: false });
  assert.is((await storedEvent(CLIENT, viaTcp, 60_000)).check.status, 2);
  await storedEvent(CLIENT, viaHttp, 30_000);
  await storedEvent(CLIENT, viaUdp, 30_000);
});

test('a result answered ok survives the agent being killed before any backend took it', async () => {
  const check = fresh('killed-agent');
  await backend.stop();
  assert.is((await tcp([JSON.stringify({ name: check, output: 'kept on disk', status: 1 })])).answer, 'ok');
  // No orderly stop: whatever was answered ok must already be on disk.
  await client.kill('SIGKILL');
  const o = client.options;
  client = await startLegacyClient({
    name: CLIENT,
    backendUrls: backend.agentUrl,
    configDir: client.configDir,
    cacheDir: client.cacheDir,
    client: {
      socket: { port: client.socketPort },
      http_socket: { port: client.httpPort, user: 'sock-user', password: 'sock:pass' },
      service: { api_key: 'key-in-settings', plain: 'shown' },
    },
    ...(o.env ? { env: o.env } : {}),
  });
  backend = await startBackend({ ...backend.options, init: false });
  assert.is((await storedEvent(CLIENT, check, 60_000)).check.status, 1);
});

test.run();
