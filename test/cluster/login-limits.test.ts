// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { connect } from 'nats';
import {
  adminAuth,
  getJson,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type Backend,
  type EtcdServer,
  type JsonResponse,
  type NatsServer,
} from '../harness/index.ts';
import { basic, created, fresh, isError } from '../harness/api.ts';
import { buckets } from '../../proto/names.ts';

// Login limits across a cluster (docs/compatibility.md#login-limits): two backends behind one
// imagined load balancer, sharing one nats-server and one etcd, count a user's failed logins
// together, whichever node each guess reaches. While NATS is away each node counts on its own.
// The address limit is off: every request comes from 127.0.0.1.

const USER_FAILURES = 4;
const WINDOW_SEC = 4;
const SHARED_LOST = 'failed logins cannot be shared through NATS';
const SHARED_AGAIN = 'failed logins are counted for the whole cluster again';

let etcd: EtcdServer;
let nats: NatsServer;
let t1: Backend;
let t2: Backend;
const sockets: WebSocket[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const login = (b: Backend, user: string, password: string) =>
  getJson(`${b.apiUrl}/auth`, { headers: basic(user, password) });
const brief = (r: JsonResponse) => `${r.status} ${JSON.stringify(r.body)}`.slice(0, 300);

async function newUser(): Promise<{ name: string; password: string }> {
  const name = fresh('login');
  const password = 'Secret-pass-1';
  const r = await t1.get('/api/core/v2/users', {
    method: 'POST',
    headers: adminAuth,
    body: { username: name, password, groups: [] },
  });
  created(r, `POST user ${name}`);
  // The user is written through t1; t2 knows it once its etcd watch has it.
  await waitFor(async () => (await login(t2, name, password)).status === 200, {
    timeoutMs: 5000,
    what: `user ${name} to log in on t2`,
  });
  return { name, password };
}

/** Wrong passwords sent at once, one to each node listed (a node may be listed again); each gets 401. */
async function fail(user: string, nodes: Backend[]): Promise<void> {
  const answers = await Promise.all(nodes.map((b) => login(b, user, 'wrong')));
  answers.forEach((r, i) => isError(r, 401, `failure ${i + 1} (on ${nodes[i]!.name})`));
}

/** A 429 with code 12 and a Retry-After within one window; answers Retry-After. */
function isBlocked(r: JsonResponse, what: string): number {
  assert.is(r.status, 429, `${what}: ${brief(r)}`);
  assert.is(r.body.code, 12, `${what}: code of too_many_requests`);
  const retryAfter = Number(r.headers.get('retry-after'));
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_SEC,
    `${what}: Retry-After ${r.headers.get('retry-after')}`,
  );
  return retryAfter;
}

/** An agent handshake with Basic credentials: the refusal's status (undefined when it opened). */
function handshake(b: Backend, user: string, password: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(b.agentUrl, {
      headers: {
        'Monitor-Namespace': 'default',
        'Monitor-AgentName': fresh('agent'),
        'Monitor-Subscriptions': 'linux',
        Authorization: basic(user, password).Authorization,
      },
    });
    sockets.push(ws);
    ws.on('open', () => resolve(undefined));
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode);
    });
    ws.on('error', () => {});
  });
}

const warnings = (b: Backend, msg: string) =>
  b.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith(msg));

test.before(async () => {
  [etcd, nats] = await Promise.all([startEtcd(), startNats()]);
  const args = [
    '--login-user-failures',
    String(USER_FAILURES),
    '--login-user-window',
    String(WINDOW_SEC),
    '--login-address-failures',
    '0',
    '--login-address-window',
    String(WINDOW_SEC - 1),
  ];
  const opts = { etcdUrl: etcd.url, natsUrl: nats.url, logLevel: 'info', extraArgs: args };
  t1 = await startBackend({ name: 'l1', ...opts });
  t2 = await startBackend({ name: 'l2', ...opts });
});

test.after(async () => {
  for (const ws of sockets) ws.terminate();
  for (const b of [t1, t2]) await b?.stop().catch(() => {});
  await Promise.all([etcd?.stop(), nats?.stop()]);
});

test('failures split over both nodes add up: the user is blocked on both, until one window has passed', async () => {
  const u = await newUser();
  const other = await newUser();
  await fail(u.name, [t1, t1, t2, t2]);
  const r1 = isBlocked(await login(t1, u.name, u.password), 'the right password on t1');
  const r2 = isBlocked(await login(t2, u.name, u.password), 'the right password on t2');
  assert.is((await login(t2, other.name, other.password)).status, 200, 'another user still logs in');
  await sleep(Math.max(r1, r2) * 1000 + 200);
  assert.is((await login(t2, u.name, u.password)).status, 200, 'on t2 once the block ended');
  assert.is((await login(t1, u.name, u.password)).status, 200, 'on t1 once the block ended');
});

test("a success on one node clears the user's count on the other", async () => {
  const u = await newUser();
  await fail(u.name, [t1, t1, t1]);
  assert.is((await login(t2, u.name, u.password)).status, 200, 'the success on t2');
  // Without the success these would make six failures within the window.
  await fail(u.name, [t1, t1, t1]);
  assert.is((await login(t1, u.name, u.password)).status, 200, 'not blocked on t1');
});

test('failed agent handshakes on one node count with API logins on the other', async () => {
  const u = await newUser();
  for (let i = 1; i < USER_FAILURES; i++)
    assert.is(await handshake(t2, u.name, 'wrong'), 401, `handshake failure ${i} on t2`);
  isError(await login(t1, u.name, 'wrong'), 401, 'the API failure on t1');
  isBlocked(await login(t1, u.name, u.password), 'the API login on t1');
  assert.is(await handshake(t2, u.name, u.password), 429, 'the handshake on t2 with the right password');
});

test("the bucket's TTL is the longer window: its entries expire on their own", async () => {
  const nc = await connect({ servers: nats.url });
  try {
    const info = await (await nc.jetstreamManager()).streams.info(`KV_${buckets.loginFailures}`);
    assert.is(info.config.max_age, WINDOW_SEC * 1e9);
  } finally {
    await nc.close();
  }
});

test('while NATS is away each node counts in its own memory, good logins still work, and sharing resumes', async () => {
  const u = await newUser();
  const later = await newUser();
  const { port, storeDir } = nats;
  await nats.stop();
  for (const b of [t1, t2])
    await waitFor(async () => b.logs().some((l) => l.msg === 'NATS connection lost, reconnecting'), {
      timeoutMs: 10_000,
      what: `${b.name} to see NATS gone`,
    });

  await fail(u.name, [t1, t1, t1, t1]);
  isBlocked(await login(t1, u.name, u.password), 'the right password on t1, which counted the failures');
  assert.is((await login(t2, u.name, u.password)).status, 200, 't2 counted none of them');
  await fail(u.name, [t2, t2]);
  for (const b of [t1, t2]) assert.is(warnings(b, SHARED_LOST).length, 1, `one warning on ${b.name}`);

  nats = await startNats({ port, storeDir });
  // A good login reads the shared counts: the first that can ends the episode.
  for (const b of [t1, t2])
    await waitFor(
      async () =>
        (await login(b, later.name, later.password)).status === 200 &&
        b.logs().some((l) => l.msg === SHARED_AGAIN),
      { timeoutMs: 20_000, intervalMs: 200, what: `${b.name} to count in NATS again` },
    );
  await fail(later.name, [t1, t1, t2, t2]);
  isBlocked(await login(t2, later.name, later.password), 'split failures once NATS is back, on t2');
  isBlocked(await login(t1, later.name, later.password), 'and on t1');
  for (const b of [t1, t2]) assert.is(warnings(b, SHARED_LOST).length, 1, `still one warning on ${b.name}`);
});

test.run();
