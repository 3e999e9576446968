// suite-timeout: 180
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { BACKEND_BIN, startBackend, type Backend } from '../harness/index.ts';

// The legacy API as an operator sets it up (docs/operations.md#legacy-api): its own Basic credentials
// on every route but OPTIONS, a password that never reaches the logs, CORS headers from a map or
// none, `--legacy-api-port 0` for no listener, and bad settings refused at the command line. One
// backend, restarted on the same state with other legacy flags.

const USER = 'legacy-ops';
const PASSWORD = 'pw-L3gacy-0ps-never-logged';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const GOOD = { Authorization: basic(USER, PASSWORD) };

let backend: Backend;

test.before(async () => {
  backend = await startBackend({
    name: 'legacy-ops',
    extraArgs: [
      ...['--legacy-api-user', USER, '--legacy-api-password', PASSWORD],
      ...['--legacy-api-cors', 'Origin=https://dash.example.com,Max-Age=600'],
    ],
  });
});

test.after(async () => {
  await backend?.stop();
});

/** Restarts the node on its state with these legacy flags instead of the first ones. */
async function restartWith(extraArgs: string[], legacyPort?: number): Promise<void> {
  await backend.stop();
  backend = await startBackend({ ...backend.options, init: false, extraArgs, legacyPort });
}

const corsHeaders = (res: Response) =>
  [...res.headers.keys()].filter((k) => k.toLowerCase().startsWith('access-control-')).sort();

test('with user and password every route asks for Basic auth: 401, WWW-Authenticate, no body', async () => {
  const tries: Array<[string, string, Record<string, string>]> = [
    ['GET', '/info', {}],
    ['GET', '/health', {}],
    ['GET', '/no-such-path', {}],
    ['POST', '/results', { 'Content-Type': 'application/json' }],
    ['GET', '/info', { Authorization: basic(USER, 'wrong') }],
    ['GET', '/info', { Authorization: basic('someone', PASSWORD) }],
    ['GET', '/info', { Authorization: `Bearer ${PASSWORD}` }],
    ['GET', '/info', { Authorization: 'Basic !!!' }],
  ];
  for (const [method, path, headers] of tries) {
    const res = await fetch(`${backend.legacyUrl}${path}`, {
      method,
      headers,
      body: method === 'POST' ? '{}' : undefined,
    });
    const what = `${method} ${path} ${JSON.stringify(headers)}`;
    assert.is(res.status, 401, what);
    assert.is(res.headers.get('www-authenticate'), 'Basic realm="Restricted Area"', what);
    assert.is(await res.text(), '', what);
  }
  const ok = await fetch(`${backend.legacyUrl}/info`, { headers: GOOD });
  assert.is(ok.status, 200);
  // The scheme's case does not matter.
  const lower = await fetch(`${backend.legacyUrl}/health`, {
    headers: { Authorization: GOOD.Authorization.replace('Basic', 'basic') },
  });
  assert.is(lower.status, 204);
  assert.type(((await ok.json()) as { sensu: { version: unknown } }).sensu.version, 'string');
});

test('OPTIONS passes without credentials, with the CORS headers', async () => {
  const res = await fetch(`${backend.legacyUrl}/events`, { method: 'OPTIONS' });
  assert.is(res.status, 200);
  assert.is(res.headers.get('access-control-allow-origin'), 'https://dash.example.com');
});

test('a --legacy-api-cors map sends Access-Control-Allow-<Key> for each of its keys, and only those', async () => {
  for (const headers of [{}, GOOD]) {
    const res = await fetch(`${backend.legacyUrl}/info`, { headers });
    await res.arrayBuffer();
    assert.equal(corsHeaders(res), ['access-control-allow-max-age', 'access-control-allow-origin']);
    assert.is(res.headers.get('access-control-allow-origin'), 'https://dash.example.com');
    assert.is(res.headers.get('access-control-allow-max-age'), '600');
  }
});

test('the legacy password never appears in the logs, nor in /settings unless asked', async () => {
  // A failed and a good attempt, then the settings as shown by default.
  await (
    await fetch(`${backend.legacyUrl}/info`, { headers: { Authorization: basic(USER, `${PASSWORD}x`) } })
  ).arrayBuffer();
  const settings = await fetch(`${backend.legacyUrl}/settings`, { headers: GOOD });
  assert.is(settings.status, 200);
  assert.not.ok((await settings.text()).includes(PASSWORD), '/settings redacts it');
  const lines = backend.proc.lines();
  assert.ok(lines.length > 0, 'the backend logged');
  assert.not.ok(
    lines.some((l) => l.includes(PASSWORD)),
    lines.find((l) => l.includes(PASSWORD)),
  );
});

test('--legacy-api-cors off sends no Access-Control header; without credentials the API is open', async () => {
  await restartWith(['--legacy-api-cors', 'off']);
  for (const method of ['GET', 'OPTIONS']) {
    const res = await fetch(`${backend.legacyUrl}/info`, { method });
    await res.arrayBuffer();
    assert.is(res.status, 200, method);
    assert.equal(corsHeaders(res), [], method);
    assert.is(res.headers.get('www-authenticate'), null);
  }
});

test('--legacy-api-port 0: nothing listens, the REST API serves', async () => {
  const former = backend.legacyPort;
  await restartWith(['--legacy-api-port', '0'], 0);
  assert.is((await backend.health()).status, 200);
  const refused = await new Promise<string>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port: former });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  assert.is(refused, 'ECONNREFUSED');
});

test('a bad --legacy-api-cors or --legacy-api-port: one line naming it, exit 2', () => {
  for (const [flag, value] of [
    ['--legacy-api-cors', 'Origin'],
    ['--legacy-api-cors', '{"Origin":'],
    ['--legacy-api-port', '70000'],
  ] as const) {
    const r = spawnSync(BACKEND_BIN, ['start', flag, value], { encoding: 'utf8', timeout: 60_000 });
    assert.is(r.status, 2, `${flag} ${value}: ${r.stderr}`);
    assert.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(r.stderr.includes(flag), r.stderr);
  }
});

test.run();
