// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { adminAuth, getJson, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { basic, coreApi, created, fresh, isError } from '../harness/api.ts';

// The REST API's edges (docs/compatibility.md#rest-edges): a wrong method on a known path is 405 with
// Allow on every route table; a wrapped body of another type is 400; check statuses are uint32;
// validation messages are sentences naming the field and the rule; Basic credentials outside /auth
// say where they belong; a caller without credentials hears 401 before any 413. Field selectors are
// in api-selector-fields.test.ts.

let backend: Backend;

const api = coreApi(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'api-edges' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await backend?.stop();
});

// --- methods ------------------------------------------------------------------------------------

const CORE = '/api/core/v2';
const NS = `${CORE}/namespaces/default`;

/** [method, path, the Allow it answers]: one or more rows of every route table on the API port. */
const WRONG_METHODS: Array<[string, string, string]> = [
  // core/v2: configuration resources, lists and items, namespaced and cluster-wide
  ['DELETE', `${NS}/checks`, 'GET, HEAD, POST'],
  ['POST', `${NS}/checks/c1`, 'GET, HEAD, PUT, PATCH, DELETE'],
  ['PATCH', `${CORE}/checks`, 'GET, HEAD'],
  ['PUT', `${CORE}/clusterroles`, 'GET, HEAD, POST'],
  ['POST', `${NS}/silenced/checks/c1`, 'GET, HEAD'],
  ['GET', `${NS}/checks/c1/execute`, 'POST'],
  ['GET', `${NS}/checks/c1/hooks/critical`, 'PUT'],
  // entities and events
  ['DELETE', `${NS}/entities`, 'GET, HEAD, POST'],
  ['DELETE', `${NS}/events`, 'GET, HEAD, POST'],
  ['PATCH', `${NS}/events/e1/c1`, 'GET, HEAD, POST, PUT, DELETE'],
  ['POST', `${NS}/events/stream`, 'GET, HEAD'],
  ['DELETE', `${CORE}/events/stream`, 'GET, HEAD'],
  // namespaces, users, API keys
  ['POST', `${NS}`, 'GET, HEAD, PUT, DELETE'],
  ['DELETE', `${CORE}/namespaces`, 'GET, HEAD, POST'],
  ['GET', `${CORE}/users/admin/reinstate`, 'PUT'],
  ['POST', `${CORE}/users/admin/groups`, 'DELETE'],
  ['PUT', `${CORE}/apikeys`, 'GET, HEAD, POST'],
  // enterprise authentication providers
  ['POST', '/api/enterprise/authentication/v2/authproviders', 'GET, HEAD'],
  ['POST', '/api/enterprise/authentication/v2/authproviders/ldap1', 'GET, HEAD, PUT, DELETE'],
  // the dashboard's API
  ['POST', '/api/dashboard/v1/events', 'GET, HEAD'],
  ['DELETE', '/api/dashboard/v1/namespaces/default/events/e1/c1', 'GET, HEAD'],
  // the legacy views (their own table, behind the same credentials)
  ['POST', '/api/legacy/clients', 'GET, HEAD'],
  ['POST', '/api/legacy/clients/web1', 'GET, HEAD, DELETE'],
  ['DELETE', '/api/legacy', 'GET, HEAD'],
  // public routes: system, auth, the dashboard's files
  ['POST', '/health', 'GET, HEAD'],
  ['DELETE', '/ready', 'GET, HEAD'],
  ['POST', '/auth', 'GET, HEAD'],
  ['GET', '/auth/token', 'POST'],
  ['PUT', '/auth/logout', 'POST'],
  ['POST', '/', 'GET, HEAD'],
  ['DELETE', '/static/app.js', 'GET, HEAD'],
];

test('a wrong method on a known path is 405 {message, code 13} with Allow, on every route table', async () => {
  for (const [method, path, allow] of WRONG_METHODS) {
    const r = await backend.get(path, { method, ...(method === 'GET' ? {} : { body: {} }) });
    isError(r, 405, `${method} ${path}`);
    assert.is(r.body.code, 13, `${method} ${path}: code`);
    assert.is(r.headers.get('Allow'), allow, `${method} ${path}: Allow`);
    assert.ok(
      r.body.message.includes(method),
      `${method} ${path}: message names the method: ${r.body.message}`,
    );
  }
});

test('every method a 405 allows is served there (HEAD as GET): Allow lists no method that is 404 or 405', async () => {
  // Not the live streams: a GET there never ends.
  for (const [method, path, allow] of WRONG_METHODS.slice(0, 10)) {
    for (const m of allow.split(', ')) {
      const r = await backend.get(path, { method: m, ...(['GET', 'HEAD'].includes(m) ? {} : { body: {} }) });
      assert.ok(r.status !== 405, `${m} ${path} (allowed after ${method}): ${r.status}`);
      if (r.status === 404)
        assert.not.match(String(r.body?.message), /no route/, `${m} ${path}: served, not an unknown route`);
    }
  }
});

test('unknown paths stay 404 whatever the method; a missing dashboard file is 404', async () => {
  const rows: Array<[string, string]> = [
    ['GET', '/nope'],
    ['POST', '/nope'],
    ['DELETE', `${CORE}/widgets`],
    ['POST', `${NS}/widgets`],
    ['PUT', `${NS}/checks/a/b/c/d`],
    ['GET', '/api/core/v3/namespaces/default/checks'],
    ['GET', '/static/no-such-file.js'],
    ['GET', '/api/legacy/nope'],
  ];
  for (const [method, path] of rows) {
    const r = await backend.get(path, { method, ...(method === 'GET' ? {} : { body: {} }) });
    isError(r, 404, `${method} ${path}`);
    assert.is(r.headers.get('Allow'), null, `${method} ${path}: no Allow`);
  }
});

test('a wrong method without credentials is 401 on the guarded tables: authentication comes first', async () => {
  for (const path of [`${NS}/checks`, '/api/dashboard/v1/events', '/api/legacy/clients']) {
    const r = await getJson(`${backend.apiUrl}${path}`, { method: 'DELETE' });
    isError(r, 401, `DELETE ${path} without credentials`);
  }
});

// --- wrapped bodies -----------------------------------------------------------------------------

const wrapped = (type: string, spec: object, name: string) => ({
  type,
  api_version: 'core/v2',
  metadata: { name, namespace: 'default' },
  spec,
});

test('a wrapped body of another type is 400 naming both types; nothing is stored', async () => {
  const rows: Array<[string, string, string, object, string]> = [
    ['POST', `/namespaces/default/checks`, 'Handler', { type: 'pipe', command: 'cat' }, 'CheckConfig'],
    ['PUT', `/namespaces/default/checks/{name}`, 'Handler', { type: 'pipe', command: 'cat' }, 'CheckConfig'],
    [
      'PUT',
      `/namespaces/default/handlers/{name}`,
      'CheckConfig',
      { command: 'true', interval: 60 },
      'Handler',
    ],
    ['POST', `/namespaces/default/entities`, 'CheckConfig', { command: 'true' }, 'Entity'],
    ['POST', `/namespaces/default/events`, 'Entity', { entity_class: 'proxy' }, 'Event'],
    ['PUT', `/namespaces/default/silenced/{name}`, 'Handler', { type: 'pipe' }, 'Silenced'],
    ['POST', `/namespaces`, 'User', { name: 'x' }, 'Namespace'],
    ['POST', `/users`, 'Namespace', { username: 'x', password: 'P@ssw0rd!' }, 'User'],
  ];
  for (const [method, path, type, spec, takes] of rows) {
    const name = fresh('wrapped');
    const url = path.replace('{name}', name);
    const r = await api(url, method, wrapped(type, spec, name));
    isError(r, 400, `${method} ${url} with a wrapped ${type}`);
    assert.ok(
      r.body.message.includes(`"${type}"`) && r.body.message.includes(`"${takes}"`),
      `${method} ${url}: names ${type} and ${takes}: ${r.body.message}`,
    );
  }
  assert.is(
    (await api('/namespaces/default/checks')).body.filter((c: any) => /^wrapped-/.test(c.metadata.name))
      .length,
    0,
  );
});

test('a wrapped body of the matching type, or another spelling of it, is stored', async () => {
  const rows: Array<[string, string, string, object]> = [
    ['PUT', '/namespaces/default/checks/{name}', 'CheckConfig', { command: 'true', interval: 60 }],
    ['PUT', '/namespaces/default/checks/{name}', 'check_config', { command: 'true', interval: 60 }],
    ['PUT', '/namespaces/default/hooks/{name}', 'Hook', { command: 'true' }],
    ['PUT', '/namespaces/default/handlers/{name}', 'Handler', { type: 'pipe', command: 'cat' }],
    ['POST', '/namespaces/default/entities', 'Entity', { entity_class: 'proxy' }],
  ];
  for (const [method, path, type, spec] of rows) {
    const name = fresh('match');
    const url = path.replace('{name}', name);
    created(await api(url, method, wrapped(type, spec, name)), `${method} ${url} as ${type}`);
  }
  // A flat handler keeps its own `type` field: only the wrapped form's envelope is checked.
  created(
    await api('/namespaces/default/handlers/flat-h', 'PUT', { type: 'pipe', command: 'cat' }),
    'a flat handler with its type field',
  );
});

// --- check statuses -----------------------------------------------------------------------------

test('check.status outside 0..4294967295 is 400 on events POST and PUT; the bounds are accepted', async () => {
  const event = (status: unknown) => ({
    entity: { metadata: { name: 'status-e' }, entity_class: 'proxy' },
    check: { metadata: { name: 'status-c' }, status, output: 'x', interval: 60 },
  });
  for (const bad of [-1, 4294967296, 1e300, 1.5, '2', true]) {
    for (const [method, path] of [
      ['POST', '/namespaces/default/events'],
      ['PUT', '/namespaces/default/events/status-e/status-c'],
    ] as const) {
      const r = await api(path, method, event(bad));
      isError(r, 400, `${method} status ${JSON.stringify(bad)}`);
      assert.match(r.body.message, /check\.status must be a whole number from 0 to 4294967295/);
    }
  }
  const hist = await api('/namespaces/default/events', 'POST', {
    ...event(0),
    check: { ...event(0).check, history: [{ status: 4294967296, executed: 1 }] },
  });
  isError(hist, 400, 'a history status over the bound');
  assert.match(hist.body.message, /check\.history\[0\]\.status must be a whole number from 0 to 4294967295/);
  for (const good of [0, 2, 4294967295])
    created(await api('/namespaces/default/events', 'POST', event(good)), `status ${good}`);
});

// --- messages -----------------------------------------------------------------------------------

test('validation messages are sentences naming the field and the rule', async () => {
  const rows: Array<[string, string, unknown, RegExp]> = [
    [
      'POST',
      '/namespaces/default/checks',
      { metadata: { name: 'm1' }, interval: 60 },
      /^invalid check: command is required/,
    ],
    [
      'POST',
      '/namespaces/default/checks',
      { metadata: { name: 'm2' }, command: 'true', interval: 60, subscriptions: [1] },
      /^invalid check: subscriptions\[0\] must be a string \(got 1\)$/,
    ],
    [
      'POST',
      '/namespaces/default/entities',
      { metadata: { name: 'm3' }, entity_class: 'robot' },
      /^invalid entity: entity_class must be one of "agent", "proxy", "backend" \(got "robot"\)$/,
    ],
    [
      'PUT',
      '/namespaces/default/handlers/m4',
      { type: 'tcp', socket: { host: 'h', port: 70000 } },
      /^invalid handler: socket\.port must be at most 65535$/,
    ],
    [
      'POST',
      '/namespaces/default/silenced',
      { reason: 'nothing named' },
      /^invalid silenced: one of check or subscription is required$/,
    ],
    [
      'PUT',
      '/namespaces/default/silenced/x:y',
      { metadata: { name: 'x:y' } },
      /^invalid silenced: one of check or subscription is required$/,
    ],
  ];
  for (const [method, path, body, message] of rows) {
    const r = await api(path, method, body);
    isError(r, 400, `${method} ${path}`);
    assert.match(r.body.message, message, `${method} ${path}`);
    assert.not.match(
      r.body.message,
      /Invalid (key|type)|Expected .* but received/,
      `valibot's words: ${r.body.message}`,
    );
  }
});

// --- credentials and body size ------------------------------------------------------------------

test('Basic credentials on an API route are 401 saying Basic is accepted only at /auth', async () => {
  for (const path of [
    `${NS}/checks`,
    '/api/dashboard/v1/events',
    '/api/enterprise/authentication/v2/authproviders',
  ]) {
    const r = await backend.get(path, { headers: basic('admin', 'P@ssw0rd!') });
    isError(r, 401, `Basic on ${path}`);
    assert.match(r.body.message, /Basic authentication is accepted only at \/auth/);
    assert.match(r.body.message, /Bearer/);
  }
  const none = await getJson(`${backend.apiUrl}${NS}/checks`);
  isError(none, 401, 'no credentials');
  assert.match(none.body.message, /^missing credentials/);
});

/** POSTs a body of `size` bytes (Content-Length or chunked) with `headers`; the status, or the connection error. */
async function postBig(size: number, chunked: boolean, headers: Record<string, string>): Promise<string> {
  const head = '{"metadata":{"name":"big"},"command":"true","interval":60,"output":"';
  const body: RequestInit['body'] = chunked
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          const enc = new TextEncoder();
          controller.enqueue(enc.encode(head));
          for (let sent = 0; sent < size; sent += 50_000) controller.enqueue(enc.encode('y'.repeat(50_000)));
          controller.enqueue(enc.encode('"}'));
          controller.close();
        },
      })
    : head + 'x'.repeat(size) + '"}';
  try {
    const res = await fetch(`${backend.apiUrl}${NS}/checks`, {
      method: 'POST',
      body,
      headers: { ...headers, 'Content-Type': 'application/json' },
      signal: AbortSignal.timeout(15000),
      ...(chunked ? { duplex: 'half' } : {}),
    } as RequestInit);
    const text = await res.text();
    const parsed = JSON.parse(text) as { code?: number };
    return `${res.status}/${parsed.code}`;
  } catch (err) {
    return `error ${(err as Error).message} (${String((err as { cause?: { code?: string } }).cause?.code ?? '')})`;
  }
}

test('a large body without credentials is 401, not 413; with credentials it is still 413', async () => {
  const outcomes: string[] = [];
  for (const chunked of [false, true])
    for (let i = 0; i < 4; i++)
      outcomes.push(`${chunked ? 'chunked' : 'length'} ${await postBig(2_000_000, chunked, {})}`);
  assert.equal(
    outcomes.filter((o) => !o.endsWith(' 401/5')),
    [],
    `every uncredentialed large body answered 401: ${outcomes.join('; ')}`,
  );
  const basicBig = await postBig(2_000_000, false, basic('admin', 'P@ssw0rd!'));
  assert.is(basicBig, '401/5', 'Basic credentials and a large body');
  for (const chunked of [false, true])
    assert.is(
      await postBig(2_000_000, chunked, adminAuth),
      '413/9',
      `authenticated ${chunked ? 'chunked' : 'length'}`,
    );
  assert.is((await backend.health()).status, 200, 'still healthy');
});

test.run();
