// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startNats, waitFor, type NatsServer } from '../harness/index.ts';
import { createLogger } from '../../lib/log.ts';
import type { KvStore } from '../../actors/runtime/kv-store.ts';
import { NatsAdapter } from '../../actors/runtime/nats.ts';
import { buckets } from '../../proto/names.ts';
import { LoginBlockedError, LoginLimits } from '../../gateway/auth/login-limits.ts';

// The shared login counts (docs/compatibility.md#login-limits) of two LoginLimits, as two nodes
// would hold them, over one real nats-server: what the KV bucket holds, concurrent failures on both,
// and what happens while the server is stopped. The windows are long: nothing here waits one out.

const FAILURES = 3;
const WINDOW_SEC = 60;

let nats: NatsServer;
const conns: NatsAdapter[] = [];
let kv: KvStore;
const lines: Record<string, any>[] = [];

async function node(failures = FAILURES): Promise<LoginLimits> {
  const conn = await NatsAdapter.connect({ servers: [nats.url], name: `login-limits-${conns.length}` });
  conns.push(conn);
  // `connected` follows the status only once someone watches it, as the backend's NATS service does.
  conn.watchStatus(() => {});
  const store = await conn.kv(buckets.loginFailures, { ttlMs: WINDOW_SEC * 1000 });
  kv ??= store;
  const log = createLogger('debug', {}, (line) => lines.push(JSON.parse(line)));
  const opts = {
    userFailures: failures,
    userWindowSec: WINDOW_SEC,
    addressFailures: 0,
    addressWindowSec: WINDOW_SEC,
  };
  return new LoginLimits(opts, log, { kv: store, connected: () => conn.connected });
}

let seq = 0;
const fresh = () => `user-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

/** The Retry-After of a refused admit; undefined when admitted. */
const retryAfter = (limits: LoginLimits, user: string) =>
  limits.admit({ user }).then(
    () => undefined,
    (err: unknown) => {
      if (err instanceof LoginBlockedError) return err.retryAfterSec;
      throw err;
    },
  );

test.before(async () => {
  nats = await startNats();
});

test.after(async () => {
  // A client drains before it closes, which waits for a server: bring back one a failed test left stopped.
  if (nats && !nats.proc.running) nats = await startNats({ port: nats.port, storeDir: nats.storeDir });
  for (const c of conns) await c.close();
  await nats?.stop();
});

test('keys are digests of what was typed: no user name (nor a password typed as one) is stored as typed', async () => {
  const a = await node();
  const typed = ['alice', 'a.b *>/ü', 'hunter2-Secret!'];
  for (const user of typed) await a.failed({ user, address: '192.0.2.7' });
  const keys = (await kv.list()).map((e) => e.key);
  assert.ok(keys.length >= typed.length, `keys ${keys}`);
  for (const k of keys) {
    assert.match(k, /^user\.[A-Za-z0-9_-]{43}$/);
    for (const user of typed) assert.not.ok(k.includes(user), `${k} holds ${user}`);
  }
});

test('concurrent failures on two nodes all count: one short of the limit admits, the limit blocks', async () => {
  const many = 24;
  const [a, b] = [await node(many), await node(many)];
  const user = fresh();
  await Promise.all(Array.from({ length: many - 1 }, (_, i) => (i % 2 ? a : b).failed({ user })));
  assert.is(await retryAfter(a, user), undefined, `${many - 1} failures admit`);
  await b.failed({ user });
  assert.ok((await retryAfter(a, user))! > 0, 'the last one blocks on a');
  assert.ok((await retryAfter(b, user))! > 0, 'and on b');
});

test('NATS stopped: each node counts alone, good checks still pass; a block made then outlives the outage', async () => {
  const [a, b] = [await node(), await node()];
  const user = fresh();
  const { port, storeDir } = nats;
  await nats.stop();
  await waitFor(() => conns.every((c) => !c.connected), { timeoutMs: 10_000, what: 'NATS seen gone' });

  for (let i = 0; i < FAILURES; i++) await a.failed({ user });
  assert.ok((await retryAfter(a, user))! > 0, 'blocked on a, which counted the failures');
  assert.is(await b.check({ user }, async () => 'ok'), 'ok', 'b counted none of them: a good check passes');
  const lost = lines.filter((l) => l.level === 'warn' && /cannot be shared/.test(l.msg));
  assert.is(lost.length, 2, `one warning per node: ${JSON.stringify(lost)}`);

  nats = await startNats({ port, storeDir });
  // Each node's first operation that reaches the bucket again ends its episode.
  const again = () => lines.filter((l) => /counted for the whole cluster again/.test(l.msg)).length;
  await waitFor(
    async () => {
      await Promise.all([a.admit({ user: fresh() }), b.admit({ user: fresh() })]);
      return again() === 2;
    },
    { timeoutMs: 10_000, what: 'both nodes to use the bucket again' },
  );
  assert.ok((await retryAfter(a, user))! > 0, 'the block made in memory holds on a');
  const other = fresh();
  await a.failed({ user: other });
  await b.failed({ user: other });
  await a.failed({ user: other });
  assert.ok((await retryAfter(b, other))! > 0, 'failures on both count together again');
});

test('NATS frozen (connected, not answering): a good check waits about a second per shared read, not the 5 s JetStream timeout', async () => {
  const a = await node();
  const user = fresh();
  const before = lines.length;
  nats.proc.signal('SIGSTOP');
  try {
    const began = Date.now();
    assert.is(await a.check({ user, address: '192.0.2.9' }, async () => 'ok'), 'ok');
    const tookMs = Date.now() - began;
    // Two shared steps (admit, then clearing the user's failures) at 1 s each; each would wait 5 s.
    assert.ok(tookMs < 4000, `the check took ${tookMs} ms`);
    const warned = lines.slice(before).filter((l) => l.level === 'warn' && /cannot be shared/.test(l.msg));
    assert.ok(warned.length >= 1, 'the node says it counts in memory');
    assert.match(String(warned[0]!.error), /timed out/);
  } finally {
    nats.proc.signal('SIGCONT');
  }
});

test.run();
