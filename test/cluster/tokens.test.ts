// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  ADMIN,
  adminAuth,
  getJson,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type Backend,
  type JsonResponse,
} from '../harness/index.ts';

// Two backends sharing one etcd and one nats-server: what one node issues or changes (tokens,
// sessions, API keys, users, checks, events) holds on the other, at once or within the short time
// of an etcd watch.

/** The longest a change made on one node may take to be seen on the other (an etcd watch). */
const WATCH_MS = 2000;
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let t1: Backend;
let t2: Backend;

const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const call = (b: Backend, auth: Record<string, string>, method: string, path: string, body?: object) =>
  getJson(b.apiUrl + path, { method, headers: auth, body });
const login = (b: Backend, user: string = ADMIN.username, password: string = ADMIN.password) =>
  getJson(`${b.apiUrl}/auth`, { headers: basic(user, password) });
const brief = (r: JsonResponse) => `${r.status} ${JSON.stringify(r.body)}`.slice(0, 300);

async function tokensFrom(
  b: Backend,
  user?: string,
  password?: string,
): Promise<{ access_token: string; refresh_token: string; expires_at: number }> {
  const r = await login(b, user, password);
  assert.is(r.status, 200, `login on ${b.name}: ${brief(r)}`);
  return r.body;
}

/** Waits at most WATCH_MS for `fn` to hold, and says how long it took. */
async function within<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  return waitFor(fn, { timeoutMs: WATCH_MS, intervalMs: 50, what });
}

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  // Refused tokens and logins are what this suite checks, many of them from one address and now
  // counted across both nodes: the login limits (test/cluster/login-limits.test.ts) would turn the
  // later answers into 429s.
  const extraArgs = ['--login-address-failures', '0', '--login-user-failures', '0'];
  const common = { etcdUrl: etcdSvc.url, natsUrl: natsSvc.url, logLevel: 'info', extraArgs };
  t1 = await startBackend({ name: 't1', ...common });
  t2 = await startBackend({ name: 't2', ...common });
});

test.after(async () => {
  for (const b of [t1, t2]) await b?.stop().catch(() => {});
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('a token issued by t1 is accepted by t2', async () => {
  const tok = await tokensFrom(t1);
  const r = await call(t2, bearer(tok.access_token), 'GET', '/api/core/v2/namespaces');
  assert.is(r.status, 200, brief(r));
  assert.ok(r.body.some((n: { name: string }) => n.name === 'default'));
  assert.is(
    (await call(t1, bearer(tok.access_token), 'GET', '/api/core/v2/namespaces')).status,
    200,
    'and by t1',
  );
});

test('an API key created on t2 works on t1 right away', async () => {
  const created = await call(t2, adminAuth, 'POST', '/api/core/v2/apikeys', { username: ADMIN.username });
  assert.is(created.status, 201, brief(created));
  const key = created.headers.get('location')!.split('/').pop()!;
  const auth = { Authorization: `Key ${key}` };
  assert.is((await call(t2, auth, 'GET', '/api/core/v2/users')).status, 200, 'on t2, read-your-write');
  await within(
    'the new API key to work on t1',
    async () => (await call(t1, auth, 'GET', '/api/core/v2/users')).status === 200,
  );
  // And its deletion on t1 ends it on t2.
  assert.is((await call(t1, adminAuth, 'DELETE', `/api/core/v2/apikeys/${key}`)).status, 204);
  await within(
    'the deleted API key to be refused on t2',
    async () => (await call(t2, auth, 'GET', '/api/core/v2/users')).status === 401,
  );
});

test('a refresh on t2 of a t1 session works; the old refresh token is then refused on t1', async () => {
  const old = await tokensFrom(t1);
  const refreshed = await call(t2, bearer(old.access_token), 'POST', '/auth/token', {
    refresh_token: old.refresh_token,
  });
  assert.is(refreshed.status, 200, `refresh on t2: ${brief(refreshed)}`);
  assert.type(refreshed.body.access_token, 'string');
  assert.type(refreshed.body.refresh_token, 'string');
  assert.is.not(refreshed.body.refresh_token, old.refresh_token);
  assert.is(
    (await call(t1, bearer(refreshed.body.access_token), 'GET', '/api/core/v2/namespaces')).status,
    200,
    'the new access token on t1',
  );
  assert.is(
    (await call(t2, bearer(refreshed.body.access_token), 'GET', '/api/core/v2/namespaces')).status,
    200,
    'the new access token on t2',
  );

  const reused = await call(t1, bearer(old.access_token), 'POST', '/auth/token', {
    refresh_token: old.refresh_token,
  });
  assert.is(reused.status, 401, `the old refresh token on t1: ${brief(reused)}`);
  const reusedT2 = await call(t2, bearer(old.access_token), 'POST', '/auth/token', {
    refresh_token: old.refresh_token,
  });
  assert.is(reusedT2.status, 401, `the old refresh token on t2: ${brief(reusedT2)}`);
  const garbage = await call(t2, bearer('not-a-jwt'), 'POST', '/auth/token', {
    refresh_token: refreshed.body.refresh_token,
  });
  assert.is(garbage.status, 400, `a refresh with a malformed access token: ${brief(garbage)}`);
  assert.match(String(garbage.body.message), /invalid access token/);
  // The new pair refreshes again, on t1 this time.
  const again = await call(t1, bearer(refreshed.body.access_token), 'POST', '/auth/token', {
    refresh_token: refreshed.body.refresh_token,
  });
  assert.is(again.status, 200, `the new refresh token on t1: ${brief(again)}`);
});

test('a refresh token is single-use, even replayed at once on both nodes', async () => {
  const rounds: string[] = [];
  let bad = 0;
  for (let round = 0; round < 10; round++) {
    const tok = await tokensFrom(t1);
    const replies = await Promise.all(
      [t1, t2, t1, t2, t1, t2].map((b) =>
        call(b, bearer(tok.access_token), 'POST', '/auth/token', { refresh_token: tok.refresh_token }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    rounds.push(statuses.join(','));
    if (statuses.filter((s) => s === 200).length !== 1) bad++;
  }
  assert.is(
    bad,
    0,
    `rounds where the same refresh token was exchanged more or less than once (statuses t1,t2,t1,t2,t1,t2 per round): ${rounds.join(' | ')}`,
  );
});

test('a logout on t1 makes the access token refused on t2', async () => {
  const tok = await tokensFrom(t1);
  const auth = bearer(tok.access_token);
  // t2 has seen (and cached) the token before the logout.
  assert.is((await call(t2, auth, 'GET', '/api/core/v2/namespaces')).status, 200, 'before logout on t2');
  const out = await call(t1, auth, 'POST', '/auth/logout');
  assert.ok(out.status >= 200 && out.status < 300, `logout: ${brief(out)}`);
  assert.is((await call(t1, auth, 'GET', '/api/core/v2/namespaces')).status, 401, 'refused on t1 at once');
  await within(
    'the logged-out token to be refused on t2',
    async () => (await call(t2, auth, 'GET', '/api/core/v2/namespaces')).status === 401,
  );
  const refresh = await call(t2, auth, 'POST', '/auth/token', { refresh_token: tok.refresh_token });
  assert.is(refresh.status, 401, `refresh after logout: ${brief(refresh)}`);
});

test('a user created on t1 logs in on t2; disabled on t2, its token is refused on t1', async () => {
  const created = await call(t1, adminAuth, 'POST', '/api/core/v2/users', {
    username: 'roamer',
    password: 'roamer-pass-1',
    groups: ['cluster-admins'],
  });
  assert.is(created.status, 201, brief(created));
  const tok = await within('roamer to log in on t2', async () => {
    const r = await login(t2, 'roamer', 'roamer-pass-1');
    return r.status === 200 ? r.body : undefined;
  });
  const auth = bearer(tok.access_token);
  assert.is((await call(t1, auth, 'GET', '/api/core/v2/users/roamer')).status, 200);
  assert.is((await call(t2, adminAuth, 'DELETE', '/api/core/v2/users/roamer')).status, 204, 'disable on t2');
  await within(
    "the disabled user's token to be refused on t1",
    async () => (await call(t1, auth, 'GET', '/api/core/v2/users/roamer')).status === 401,
  );
  assert.is((await login(t1, 'roamer', 'roamer-pass-1')).status, 401, 'nor can it log in on t1');
});

test('a user disabled on t2 cannot refresh its session on t1', async () => {
  const created = await call(t1, adminAuth, 'POST', '/api/core/v2/users', {
    username: 'roamer-2',
    password: 'roamer-pass-2',
    groups: [],
  });
  assert.is(created.status, 201, brief(created));
  const tok = await within('roamer-2 to log in on t1', async () => {
    const r = await login(t1, 'roamer-2', 'roamer-pass-2');
    return r.status === 200 ? r.body : undefined;
  });
  assert.is(
    (await call(t2, adminAuth, 'DELETE', '/api/core/v2/users/roamer-2')).status,
    204,
    'disable on t2',
  );
  await within(
    't1 to see roamer-2 disabled',
    async () => (await login(t1, 'roamer-2', 'roamer-pass-2')).status === 401,
  );
  const refresh = await call(t1, bearer(tok.access_token), 'POST', '/auth/token', {
    refresh_token: tok.refresh_token,
  });
  assert.is(refresh.status, 401, `a disabled user refreshes its session on t1: ${brief(refresh)}`);
});

test('a check created on t1 is listed on t2', async () => {
  const check = {
    metadata: { name: 'roaming-check' },
    command: 'true',
    publish: false,
    subscriptions: ['nowhere'],
  };
  const created = await call(t1, adminAuth, 'POST', '/api/core/v2/namespaces/default/checks', check);
  assert.is(created.status, 201, brief(created));
  await within('the check in the list of t2', async () => {
    const r = await call(t2, adminAuth, 'GET', '/api/core/v2/namespaces/default/checks');
    return (
      r.status === 200 &&
      r.body.some((c: { metadata: { name: string } }) => c.metadata.name === 'roaming-check')
    );
  });
  const one = await call(t2, adminAuth, 'GET', '/api/core/v2/namespaces/default/checks/roaming-check');
  assert.is(one.status, 200);
  assert.is(one.body.command, 'true');
});

test('an event posted on t2 is readable by name on t1 right after the 201', async () => {
  for (let i = 0; i < 5; i++) {
    const entity = `roaming-entity-${i}`;
    const event = {
      entity: { metadata: { name: entity }, entity_class: 'proxy' },
      check: { metadata: { name: 'roaming' }, status: 1, output: `warning ${i}`, interval: 60 },
    };
    const posted = await call(t2, adminAuth, 'POST', '/api/core/v2/namespaces/default/events', event);
    assert.is(posted.status, 201, brief(posted));
    const read = await call(t1, adminAuth, 'GET', `/api/core/v2/namespaces/default/events/${entity}/roaming`);
    assert.is(read.status, 200, `event ${i} on t1 right after the 201: ${brief(read)}`);
    assert.is(read.body.check.output, `warning ${i}`);
    assert.is(read.body.check.status, 1);
    assert.is(read.body.entity.metadata.name, entity);
  }
});

test.run();
