// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { startBackend, type Backend } from '../harness/index.ts';
import { bodyText, fuzz } from '../harness/fuzz.ts';

// Fuzzing the legacy API (port 4567) of one real backend, with credentials set: the bodies of every
// write route (arbitrary text and JSON, mutated and shadowed valid bodies), arbitrary paths and
// methods, list query strings and Authorization headers. Every answer is one the legacy API can give
// (never a 5xx), its 4xx carry no body, a refused write stores nothing, and the backend keeps serving.

const BODY_RUNS = 2_000;
const PATH_RUNS = 1_500;
const QUERY_RUNS = 800;
const AUTH_RUNS = 300;

const USER = 'fz-user';
const PASSWORD = 'fz:pass word';
const auth = { Authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

let backend: Backend;

test.before(async () => {
  backend = await startBackend({
    name: 'fuzz-legacy',
    logLevel: 'warn',
    extraArgs: ['--legacy-api-user', USER, '--legacy-api-password', PASSWORD],
  });
});

test.after(async () => {
  await backend?.stop();
});

interface Answer {
  status: number;
  text: string;
}

async function call(method: string, path: string, body?: string, headers: Record<string, string> = auth) {
  const r = await fetch(backend.legacyUrl + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, text: await r.text() } satisfies Answer;
}

/** The statuses a legacy route answers with; its 4xx (but a 413) never have a body. */
function lawful(a: Answer, what: string): void {
  assert.ok(
    [200, 201, 202, 204, 400, 404, 405, 412].includes(a.status),
    `${what}: status ${a.status} ${a.text}`,
  );
  if ([400, 404, 405].includes(a.status)) assert.is(a.text, '', `${what}: a ${a.status} has no body`);
  if (a.status < 300 && a.text) JSON.parse(a.text);
}

const ROUTES: Array<{ path: string; valid: Record<string, unknown> }> = [
  { path: '/clients', valid: { name: 'fz-client', address: '10.0.0.1', subscriptions: ['linux'] } },
  { path: '/results', valid: { name: 'fz-check', output: 'ok', status: 1, source: 'fz-source' } },
  { path: '/resolve', valid: { client: 'fz-source', check: 'fz-check' } },
  { path: '/request', valid: { check: 'fz-check', subscribers: ['linux'] } },
  { path: '/stashes', valid: { path: 'fz/stash', content: { a: 1 }, expire: 3600 } },
  { path: '/stashes/fz/direct', valid: { a: 1 } },
  { path: '/silenced', valid: { subscription: 'linux', check: 'fz-check', expire: 3600, reason: 'r' } },
  { path: '/silenced/clear', valid: { id: 'linux:fz-check' } },
];

const VALID_NAME = /^[\w.-]+$/;

test('write bodies: lawful answers, bare 4xx, and a refused client or stash is not stored', async () => {
  const clients = new Set<string>();
  const stashes = new Set<string>();
  await fuzz(
    'legacy write bodies',
    fc.asyncProperty(
      fc.constantFrom(...ROUTES),
      fc.constantFrom(...ROUTES).chain((r) => bodyText(r.valid)),
      async (route, body) => {
        const a = await call('POST', route.path, body);
        lawful(a, `POST ${route.path} ${body}`);
        if (a.status >= 300) return;
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(body) as Record<string, unknown>;
        } catch {
          /* accepted text cannot happen: lawful() would have failed on the status */
        }
        if (route.path === '/clients') clients.add(String(parsed.name));
        if (route.path === '/results')
          for (const k of ['source', 'client'])
            if (typeof parsed[k] === 'string' && VALID_NAME.test(parsed[k])) clients.add(parsed[k]);
        if (route.path === '/stashes') stashes.add(String(parsed.path));
        if (route.path === '/stashes/fz/direct') stashes.add('fz/direct');
      },
    ),
    BODY_RUNS,
  );
  // Accepted results of entities not named in the body go to the API's own client.
  clients.add('monitor-api');
  const listedClients = JSON.parse((await call('GET', '/clients')).text) as Array<{ name: string }>;
  for (const c of listedClients) assert.ok(clients.has(c.name), `client ${c.name} was never accepted`);
  const listedStashes = JSON.parse((await call('GET', '/stashes')).text) as Array<{ path: string }>;
  for (const s of listedStashes) assert.ok(stashes.has(s.path), `stash ${s.path} was never accepted`);
});

const SEGMENTS = [
  'events',
  'incidents',
  'clients',
  'checks',
  'results',
  'aggregates',
  'stashes',
  'stash',
  'silenced',
  'ids',
  'subscriptions',
  'clear',
  'history',
  'info',
  'health',
  'settings',
  'resolve',
  'request',
  'fz-client',
  'fz-check',
  'ok',
  'critical',
  '%20',
  '%zz',
  '..',
  '*',
  'a:b',
  '\u00e9',
  '',
];

test('paths and methods: lawful answers and bare 4xx on any path', async () => {
  await fuzz(
    'legacy paths and methods',
    fc.asyncProperty(
      fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'),
      fc.array(fc.oneof(fc.constantFrom(...SEGMENTS), fc.string({ maxLength: 6 })), {
        minLength: 1,
        maxLength: 4,
      }),
      async (method, segments) => {
        const path = '/' + segments.map((s) => encodeURIComponent(s).replace(/%25/g, '%')).join('/');
        let a: Answer;
        try {
          a = await call(method, path, method === 'POST' ? '{}' : undefined);
        } catch (err) {
          // fetch refuses some paths on the client side (not sent): nothing to judge.
          if (err instanceof TypeError) return;
          throw err;
        }
        lawful(a, `${method} ${path}`);
      },
    ),
    PATH_RUNS,
  );
});

test('list queries: limit, offset and filters never fail a list', async () => {
  await fuzz(
    'legacy list queries',
    fc.asyncProperty(
      fc.constantFrom('/events', '/clients', '/checks', '/results', '/aggregates', '/stashes', '/silenced'),
      fc.dictionary(
        fc.oneof(
          fc.constantFrom('limit', 'offset', 'filter.name', 'filter.check.status', 'filter.a.b.c'),
          fc.string({ maxLength: 8 }),
        ),
        fc.oneof(fc.constantFrom('0', '1', '10', '-1', '999999999999', 'x', ''), fc.string({ maxLength: 8 })),
        { maxKeys: 4 },
      ),
      async (path, query) => {
        const a = await call('GET', `${path}?${new URLSearchParams(query).toString()}`);
        assert.is(a.status, 200, `${path} ${JSON.stringify(query)}: ${a.text}`);
        assert.ok(Array.isArray(JSON.parse(a.text)), `${path}: an array`);
      },
    ),
    QUERY_RUNS,
  );
});

test('Authorization headers: only the right credentials pass, a refusal is a bare 401', async () => {
  await fuzz(
    'legacy Authorization',
    fc.asyncProperty(
      fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.string({ maxLength: 30 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
        fc.constantFrom(
          `Basic ${Buffer.from(`${USER}:`).toString('base64')}`,
          `Basic ${Buffer.from(USER).toString('base64')}`,
        ),
      ),
      async (header) => {
        let a: Answer;
        try {
          a = await call('GET', '/info', undefined, { Authorization: header });
        } catch (err) {
          if (err instanceof TypeError) return; // not a valid header value: never sent
          throw err;
        }
        assert.is(a.status, 401, header);
        assert.is(a.text, '');
      },
    ),
    AUTH_RUNS,
  );
  assert.is((await call('GET', '/info')).status, 200, 'the right credentials still pass');
});

test.run();
