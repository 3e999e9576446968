// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { adminAuth, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, isError } from '../harness/api.ts';

// Errors across the API: malformed bodies of every kind, the request size limit, unknown routes;
// and the public system routes (/health, /ready, /version, /metrics). Every error is
// `{"message", "code"}`. The errors of lists (paging parameters, selectors) are in api-lists.test.ts.

let backend: Backend;

const api = coreApi(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'api-errors' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await backend?.stop();
});

// --- bad bodies ---------------------------------------------------------------------------------

test('bad bodies: malformed JSON, an array, empty, a string, null, a number, wrong types are 400', async () => {
  const routes: Array<[string, string, unknown]> = [
    ['POST', '/namespaces/default/checks', { command: 42, interval: 'often', metadata: { name: 'typed' } }],
    ['PUT', '/namespaces/default/handlers/h-typed', { type: 'pipe', command: ['cat'] }],
    ['POST', '/namespaces/default/entities', { metadata: { name: 'typed' }, subscriptions: 'linux' }],
    [
      'POST',
      '/namespaces/default/events',
      { entity: { metadata: { name: 'typed' } }, check: { metadata: { name: 'disk' }, status: 'x' } },
    ],
    ['PATCH', '/namespaces/default/entities/typed', { subscriptions: 'linux' }],
    ['POST', '/namespaces', { name: 42 }],
    ['POST', '/users', { username: 'typed', password: 12345678 }],
    ['POST', '/apikeys', { username: ['admin'] }],
    ['PUT', '/namespaces/default/silenced/a:b', { subscription: 'a', check: 'b', expire: 'soon' }],
  ];
  // Something to PATCH.
  created(
    await api('/namespaces/default/entities', 'POST', { metadata: { name: 'typed' } }),
    'entity to patch',
  );
  for (const [method, path, wrongTypes] of routes) {
    const raw: Array<[string, string]> = [
      ['malformed JSON', '{"metadata": {'],
      ['a JSON array', '[{"metadata":{"name":"x"}}]'],
      ['an empty body', ''],
      ['a JSON string', '"checks"'],
      ['JSON null', 'null'],
      ['a JSON number', '42'],
      ['whitespace', '   '],
      ['not JSON at all', 'name=x'],
    ];
    for (const [what, text] of raw) {
      isError(
        await api(path, method, text, { 'Content-Type': 'application/json' }),
        400,
        `${method} ${path} with ${what}`,
      );
    }
    isError(await api(path, method, wrongTypes), 400, `${method} ${path} with wrong types`);
  }
  const typed = await api('/namespaces/default/entities/typed');
  assert.equal(typed.body.subscriptions, ['entity:typed'], 'the bad PATCH changed nothing');
});

test('bad bodies: POST /checks/:name/execute refuses malformed JSON, arrays and scalars (400)', async () => {
  created(
    await api('/namespaces/default/checks', 'POST', {
      command: 'true',
      interval: 60,
      subscriptions: ['web'],
      metadata: { name: 'some-check' },
    }),
    'check to execute',
  );
  // An empty body is an ad hoc request with the check's own subscriptions.
  assert.is(
    (
      await api('/namespaces/default/checks/some-check/execute', 'POST', '', {
        'Content-Type': 'application/json',
      })
    ).status,
    202,
    'an empty body',
  );
  isError(
    await api('/namespaces/default/checks/some-check/execute', 'POST', { subscriptions: 'linux' }),
    400,
    'subscriptions not an array',
  );
  // A body that is there but is not a JSON object must not run the check on its default subscriptions.
  for (const [what, text] of [
    ['malformed JSON', '{"subscriptions": ["linux"'],
    ['a JSON array', '["linux"]'],
    ['a JSON string', '"linux"'],
    ['a JSON number', '42'],
    ['not JSON at all', 'subscriptions=linux'],
  ]) {
    isError(
      await api('/namespaces/default/checks/some-check/execute', 'POST', text, {
        'Content-Type': 'application/json',
      }),
      400,
      `execute with ${what}`,
    );
  }
});

test('a body over 512,000 bytes is 413 with a JSON error', async () => {
  const big = JSON.stringify({
    command: 'true',
    interval: 60,
    metadata: { name: 'huge' },
    output: 'x'.repeat(600_000),
  });
  assert.ok(Buffer.byteLength(big) > 512_000);
  const res = await fetch(`${backend.apiUrl}/api/core/v2/namespaces/default/checks`, {
    method: 'POST',
    body: big,
    headers: { ...adminAuth, 'Content-Type': 'application/json' },
    signal: AbortSignal.timeout(10000),
  });
  const text = await res.text();
  assert.is(res.status, 413, text);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    assert.unreachable(`413 body is not JSON: ${text}`);
  }
  isError({ status: res.status, headers: res.headers, body }, 413, 'big body');

  // Just under the limit is read (and here refused for what it says, not for its size).
  const under = JSON.stringify({
    command: 'true',
    interval: 60,
    metadata: { name: 'almost' },
    cron: 'x'.repeat(400_000),
  });
  isError(
    await api('/namespaces/default/checks', 'POST', under, { 'Content-Type': 'application/json' }),
    400,
    'a large but allowed body with a cron and an interval',
  );
  assert.is((await api('/namespaces/default/checks/huge')).status, 404, 'nothing stored');
  assert.is((await backend.health()).status, 200, 'still healthy');
});

/** POSTs `size` bytes (with Content-Length, or chunked) and returns the status and body, or the connection error. */
async function postBig(
  size: number,
  chunked: boolean,
): Promise<{ status?: number; body?: any; error?: string }> {
  const url = `${backend.apiUrl}/api/core/v2/namespaces/default/checks`;
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
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { ...adminAuth, 'Content-Type': 'application/json' },
      signal: AbortSignal.timeout(10000),
      ...(chunked ? { duplex: 'half' } : {}),
    } as RequestInit);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* text */
    }
    return { status: res.status, body: parsed };
  } catch (err) {
    return {
      error: `${(err as Error).message} (${String((err as { cause?: { code?: string } }).cause?.code ?? '')})`,
    };
  }
}

test('a much larger body (10 MB, with Content-Length or chunked) still gets the 413 JSON answer, not a broken connection', async () => {
  // The client must be able to read why it was refused: the server answers early, and must not
  // reset the connection while the client is still sending (12 tries of each, so a race shows).
  const outcomes: string[] = [];
  for (const chunked of [false, true]) {
    for (let i = 0; i < 12; i++) {
      const r = await postBig(10_000_000, chunked);
      outcomes.push(`${chunked ? 'chunked' : 'content-length'}: ${r.error ?? r.status}`);
      if (r.status !== undefined)
        isError(
          { status: r.status, headers: new Headers(), body: r.body },
          413,
          `10 MB ${chunked ? 'chunked' : 'with Content-Length'}`,
        );
    }
  }
  const failures = outcomes.filter((o) => !o.endsWith(': 413'));
  assert.equal(
    failures,
    [],
    `every oversized request answered with 413; got ${failures.length}/24 connection errors: ${failures.join('; ')}`,
  );
  assert.is((await backend.health()).status, 200, 'still healthy');
});

// --- unknown routes -----------------------------------------------------------------------------

test('unknown routes and resources are 404 JSON', async () => {
  isError(await backend.get('/nope'), 404, 'GET /nope');
  isError(await backend.get('/api/core/v2/widgets'), 404, 'GET an unknown resource');
  isError(
    await backend.get('/api/core/v2/namespaces/default/widgets'),
    404,
    'GET an unknown namespaced resource',
  );
  isError(
    await backend.get('/api/core/v2/namespaces/default/widgets', {
      method: 'POST',
      body: { metadata: { name: 'w' } },
    }),
    404,
    'POST an unknown resource',
  );
  isError(await backend.get('/api/core/v3/namespaces/default/checks'), 404, 'another API version');
  isError(await backend.get('/api/core/v2/namespaces/default/checks/a/b/c/d'), 404, 'too deep a path');
  const wrongMethod = await backend.get('/api/core/v2/checks', { method: 'DELETE' });
  assert.ok(
    wrongMethod.status === 404 || wrongMethod.status === 405,
    `DELETE on a list: ${wrongMethod.status}`,
  );
  isError(wrongMethod, wrongMethod.status, 'DELETE on a list');
});

// --- system routes ------------------------------------------------------------------------------

test('GET /health, /ready, /version', async () => {
  const health = await backend.health();
  assert.is(health.status, 200);
  assert.is(health.body.healthy, true);
  // Ready once the node holds its shards and its read models are loaded, which may follow /health.
  const ready = await waitFor(
    async () => {
      const r = await backend.get('/ready');
      return r.status === 200 ? r : undefined;
    },
    { timeoutMs: 20_000, what: '/ready 200' },
  );
  assert.equal(ready.body, { ready: true, reasons: [] });
  const version = await backend.get('/version');
  assert.is(version.status, 200);
  assert.type(version.body.monitor_backend, 'string');
  assert.ok(version.body.monitor_backend.length > 0);
  assert.type(version.body.etcd, 'object');
  assert.type(version.body.etcd.etcdserver, 'string');
  assert.match(version.body.etcd.etcdserver, /^\d+\.\d+\.\d+/);
});

test('GET /metrics: Prometheus text with the HTTP, agent, mailbox and event metrics', async () => {
  // Something to count.
  await api('/namespaces/default/checks');
  const res = await fetch(`${backend.apiUrl}/metrics`, { signal: AbortSignal.timeout(10000) });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  const text = await res.text();
  for (const name of [
    'monitor_http_requests_total',
    'monitor_http_request_duration_seconds',
    'monitor_agents_connected',
    'monitor_actor_mailbox_depth',
    'monitor_events_processed_total',
  ]) {
    assert.ok(new RegExp(`^# TYPE ${name} `, 'm').test(text), `# TYPE ${name}`);
    assert.ok(
      new RegExp(`^${name}(_bucket|_sum|_count)?(\\{[^}]*\\})? \\d`, 'm').test(text),
      `a sample of ${name}`,
    );
  }
  assert.match(text, /^monitor_http_requests_total\{[^}]*method="GET"[^}]*\} \d+/m);
  assert.match(text, /^monitor_http_request_duration_seconds_bucket\{[^}]*le="\+Inf"[^}]*\} \d+/m);
  assert.match(text, /^monitor_agents_connected \d+/m);
});

test.run();
