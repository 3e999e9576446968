// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import {
  getJson,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { basic, coreApi, created, fresh, isError, type Body } from '../harness/api.ts';

// Login abuse (docs/compatibility.md#authentication): failed logins are counted per user name and per
// address, on /auth, /auth/test, token refreshes and the agent handshake; a blocked caller gets 429
// with Retry-After, even with the right password, until the block ends. A failure costs the same
// whether the user exists or not. Every request here comes from 127.0.0.1, so the per-user limit is
// shown with one user failing and the per-address limit with many users failing once each.

const USER_FAILURES = 3;
const ADDRESS_FAILURES = 12;
const WINDOW_SEC = 4;

let backend: Backend;
const agents: AgentProc[] = [];
const sockets: WebSocket[] = [];
const api = coreApi(() => backend);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits out every count and block of earlier tests: they all end within one window. */
const quiet = () => sleep(WINDOW_SEC * 1000 + 300);

const call = (path: string, headers: Record<string, string>, method = 'GET', body?: object) =>
  getJson<Body>(`${backend.apiUrl}${path}`, { method, headers, ...(body ? { body } : {}) });
const login = (user: string, password: string) => call('/auth', basic(user, password));

async function newUser(password = 'Secret-pass-1'): Promise<{ name: string; password: string }> {
  const name = fresh('login');
  created(await api('/users', 'POST', { username: name, password, groups: [] }), `POST user ${name}`);
  return { name, password };
}

/** A 429 in the API's error format, with Retry-After in whole seconds within one window. */
function isBlocked(r: { status: number; headers: Headers; body: any }, what: string): number {
  assert.is(r.status, 429, `${what}: expected 429, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.equal(Object.keys(r.body).sort(), ['code', 'message'], `${what}: error body`);
  assert.is(r.body.code, 12, `${what}: code of too_many_requests`);
  const retryAfter = Number(r.headers.get('retry-after'));
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_SEC,
    `${what}: Retry-After ${r.headers.get('retry-after')}`,
  );
  return retryAfter;
}

/** An agent handshake; the open socket or the refused answer's status, Retry-After and body. */
function handshake(
  user: string,
  password: string,
): Promise<{ ws?: WebSocket; status?: number; retryAfter?: string; body?: any }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(backend.agentUrl, {
      headers: {
        'Monitor-Namespace': 'default',
        'Monitor-AgentName': fresh('agent'),
        'Monitor-Subscriptions': 'linux',
        Authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64'),
      },
    });
    sockets.push(ws);
    ws.on('open', () => resolve({ ws }));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          retryAfter: res.headers['retry-after'],
          body: JSON.parse(text),
        }),
      );
    });
    ws.on('error', () => {});
  });
}

test.before(async () => {
  backend = await startBackend({
    name: 'login-limits',
    extraArgs: [
      '--login-user-failures',
      String(USER_FAILURES),
      '--login-user-window',
      String(WINDOW_SEC),
      '--login-address-failures',
      String(ADDRESS_FAILURES),
      '--login-address-window',
      String(WINDOW_SEC),
    ],
  });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  for (const ws of sockets) ws.terminate();
  await Promise.all(agents.map((a) => a.stop()));
  await backend?.stop();
});

test('a user failing N times on /auth and /auth/test gets 429 with Retry-After, even with the right password; others still log in; the block ends', async () => {
  const victim = await newUser();
  const other = await newUser();
  for (let i = 0; i < USER_FAILURES; i++) {
    const r =
      i % 2 ? await call('/auth/test', basic(victim.name, 'wrong')) : await login(victim.name, 'wrong');
    isError(r, 401, `failure ${i + 1}`);
  }
  const retryAfter = isBlocked(await login(victim.name, victim.password), 'the right password while blocked');
  isBlocked(await call('/auth/test', basic(victim.name, victim.password)), '/auth/test while blocked');
  assert.is((await login(other.name, other.password)).status, 200, 'another user logs in');
  await sleep(retryAfter * 1000 + 200);
  assert.is((await login(victim.name, victim.password)).status, 200, 'the right password after Retry-After');
});

test('a success resets the user name count: failures around it never add up to a block', async () => {
  await quiet();
  const u = await newUser();
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < USER_FAILURES - 1; i++) isError(await login(u.name, 'wrong'), 401, `round ${round}`);
    assert.is((await login(u.name, u.password)).status, 200, `the success of round ${round}`);
  }
});

test('an address failing N times over many users gets 429 for every user, until the block ends', async () => {
  await quiet();
  const good = await newUser();
  // Concurrent, so all of them land inside one window even on a busy machine.
  const failures = await Promise.all(
    Array.from({ length: ADDRESS_FAILURES }, (_, i) => login(fresh(`nobody-${i}`), 'wrong')),
  );
  failures.forEach((r, i) => isError(r, 401, `unknown user ${i}`));
  const retryAfter = isBlocked(await login(good.name, good.password), 'a good user from the blocked address');
  await sleep(retryAfter * 1000 + 200);
  assert.is((await login(good.name, good.password)).status, 200, 'after Retry-After');
});

test('failed token refreshes count against the address', async () => {
  await quiet();
  const u = await newUser();
  const tokens = (await login(u.name, u.password)).body;
  const refresh = (token: string) =>
    call('/auth/token', { Authorization: `Bearer ${tokens.access_token}` }, 'POST', { refresh_token: token });
  for (let i = 0; i < ADDRESS_FAILURES; i++) isError(await refresh(`nope.${i}`), 401, `bad refresh ${i}`);
  const retryAfter = isBlocked(
    await refresh(tokens.refresh_token),
    'a good refresh token from the blocked address',
  );
  await sleep(retryAfter * 1000 + 200);
  assert.is((await refresh(tokens.refresh_token)).status, 200, 'the refresh after Retry-After');
});

test('an unknown user fails about as slowly as a known one (median at least half)', async () => {
  await quiet();
  const known = await Promise.all([newUser(), newUser(), newUser()]);
  const timed = async (user: string) => {
    const start = performance.now();
    isError(await login(user, 'wrong-password'), 401, `failure of ${user}`);
    return performance.now() - start;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const knownMs: number[] = [];
  const unknownMs: number[] = [];
  // Interleaved, each known user failing fewer times than its limit, so load hits both alike.
  for (let i = 0; i < 5; i++) {
    knownMs.push(await timed(known[i % known.length]!.name));
    unknownMs.push(await timed(fresh('nobody')));
  }
  assert.ok(
    median(unknownMs) >= median(knownMs) / 2,
    `unknown ${unknownMs.map(Math.round)} ms, known ${knownMs.map(Math.round)} ms`,
  );
});

test('the agent handshake: failures count with the API logins, a blocked user gets 429 with Retry-After', async () => {
  await quiet();
  const u = await newUser();
  isError(await login(u.name, 'wrong'), 401, 'an API failure');
  for (let i = 1; i < USER_FAILURES; i++) {
    const r = await handshake(u.name, 'wrong');
    assert.is(r.status, 401, `handshake failure ${i}: ${JSON.stringify(r.body)}`);
  }
  const blocked = await handshake(u.name, u.password);
  assert.is(blocked.status, 429, `the right password while blocked: ${JSON.stringify(blocked.body)}`);
  assert.is(blocked.body.code, 12);
  const retryAfter = Number(blocked.retryAfter);
  assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_SEC, `Retry-After ${blocked.retryAfter}`);
  isBlocked(await login(u.name, u.password), 'the API login of the user blocked at the handshake');
});

test('a real agent refused with 429 waits for Retry-After, then connects', async () => {
  await quiet();
  // The agents' shared user, blocked by someone else's wrong passwords.
  for (let i = 0; i < USER_FAILURES; i++) assert.is((await handshake('agent', 'wrong')).status, 401);
  const name = fresh('blocked-agent');
  const agent = await startAgent({
    name,
    backendUrls: backend.agentUrl,
    extraArgs: ['--retry-min', '0.2', '--retry-max', '0.5'],
  });
  agents.push(agent);
  await waitFor(async () => (await api(`/namespaces/default/entities/${name}`)).status === 200, {
    timeoutMs: (WINDOW_SEC + 10) * 1000,
    what: 'the agent to connect once the block ended',
  });
  const refused = agent.proc.jsonLines().filter((l) => l.msg === 'backend connection failed');
  assert.ok(refused.length >= 1, 'refused at least once');
  assert.is(refused[0]!.status, 429);
  assert.ok(
    refused[0]!.retry_in_seconds >= 1,
    `the retry waits for Retry-After, not --retry-max 0.5: ${JSON.stringify(refused[0])}`,
  );
});

test.run();
