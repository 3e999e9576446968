// suite-timeout: 120
/**
 * Self-test of the shared harness: ports, real etcd, real nats-server,
 * process groups, waitFor.
 */
import net from 'node:net';
import fs from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Etcd3 } from 'etcd3';
import { connect, StringCodec, type NatsConnection } from 'nats';
import {
  Proc,
  freePort,
  getJson,
  processGroupMembers,
  sleep,
  startEtcd,
  startNats,
  tempDir,
  waitFor,
  type EtcdServer,
  type NatsServer,
} from '../harness/index.ts';

const cleanups: Array<() => Promise<unknown> | unknown> = [];

test.after(async () => {
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error('cleanup failed:', err);
    }
  }
});

test('freePort hands out distinct, bindable, non-default ports', async () => {
  const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
  assert.is(new Set(ports).size, ports.length, 'all distinct');
  for (const p of [2379, 2380, 4222, 8080, 8081]) assert.not.ok(ports.includes(p), `never ${p}`);
  for (const port of ports.slice(0, 10)) {
    await new Promise<void>((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
    });
  }
});

test('tempDir makes fresh writable dirs', () => {
  const a = tempDir('harness-self');
  const b = tempDir('harness-self');
  assert.is.not(a, b);
  fs.writeFileSync(`${a}/x`, 'y');
  assert.is(fs.readFileSync(`${a}/x`, 'utf8'), 'y');
  assert.equal(fs.readdirSync(b), []);
});

let etcd: EtcdServer | undefined;

test('startEtcd: healthy, put/get through etcd3', async () => {
  etcd = await startEtcd();
  cleanups.push(() => etcd?.stop());
  assert.match(etcd.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const health = await getJson(`${etcd.url}/health`);
  assert.is(health.status, 200);
  assert.is(health.body.health, 'true');

  const client = new Etcd3({ hosts: etcd.url });
  cleanups.push(() => client.close());
  await client.put('/harness/k').value('v1');
  assert.is(await client.get('/harness/k').string(), 'v1');
});

let nats: NatsServer | undefined;

test('startNats: request/reply through nats', async () => {
  nats = await startNats();
  cleanups.push(() => nats?.stop());
  const nc: NatsConnection = await connect({ servers: nats.url, timeout: 2000 });
  cleanups.push(() => nc.close());
  const sc = StringCodec();
  nc.subscribe('harness.echo', {
    callback: (err, msg) => {
      if (!err) msg.respond(sc.encode(`echo:${sc.decode(msg.data)}`));
    },
  });
  await nc.flush();
  const reply = await nc.request('harness.echo', sc.encode('hi'), { timeout: 2000 });
  assert.is(sc.decode(reply.data), 'echo:hi');
  // JetStream is enabled (-js)
  const jsm = await nc.jetstreamManager();
  const info = await jsm.getAccountInfo();
  assert.ok(info.limits !== undefined);
});

test('Proc.kill kills the whole process group', async () => {
  const p = Proc.start('sleeps', 'sh', ['-c', 'sleep 1000 & sleep 1000']);
  cleanups.push(() => p.kill());
  const members = await waitFor(
    async () => {
      const m = processGroupMembers(p.pid);
      return m.length >= 3 ? m : undefined; // sh + 2 sleeps
    },
    { timeoutMs: 5000, intervalMs: 50, what: 'sh and both sleeps' },
  );
  assert.ok(members.includes(p.pid));
  assert.ok(p.running);
  const exit = await p.kill();
  assert.is(exit.signal, 'SIGKILL');
  assert.not.ok(p.running);
  await waitFor(async () => processGroupMembers(p.pid).length === 0, {
    timeoutMs: 3000,
    intervalMs: 50,
    what: 'the process group to be empty',
  });
  for (const pid of members) {
    let alive = true;
    try {
      const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      alive = state.slice(state.lastIndexOf(')') + 2)[0] !== 'Z';
    } catch {
      alive = false;
    }
    assert.not.ok(alive, `pid ${pid} is gone`);
  }
});

test('Proc lines, jsonLines, waitForLine, stop', async () => {
  const p = Proc.start('printer', 'sh', [
    '-c',
    `echo plain; echo '{"level":"info","msg":"hello"}' >&2; trap 'echo got-term; printf "no newline"; exit 0' TERM; while :; do sleep 0.05; done`,
  ]);
  cleanups.push(() => p.kill());
  const line = await p.waitForLine((l) => l.includes('"hello"'), 5000);
  assert.match(line, /hello/);
  assert.ok(p.lines().includes('plain'));
  assert.equal(p.jsonLines(), [{ level: 'info', msg: 'hello' }]);
  assert.equal(p.lines('stderr'), ['{"level":"info","msg":"hello"}']);
  const exit = await p.stop(3000);
  assert.is(exit.code, 0);
  await p.drained();
  assert.ok(p.lines().includes('got-term'), p.lines().join('|'));
  assert.ok(p.lines().includes('no newline'), 'unterminated last line is kept');

  const q = Proc.start('quick', 'sh', ['-c', 'echo bye; exit 3']);
  cleanups.push(() => q.kill());
  try {
    await q.waitForLine((l) => l === 'never', 5000);
    assert.unreachable('should have rejected');
  } catch (err) {
    assert.match((err as Error).message, /exited \(code=3 signal=null\) before printing the expected line/);
    assert.match((err as Error).message, /bye/);
  }
});

test('Proc.start throws for a missing executable', () => {
  assert.throws(() => Proc.start('nope', '/nonexistent/binary', []), /cannot spawn/);
});

test('waitFor returns the first truthy value', async () => {
  let n = 0;
  const v = await waitFor(async () => (++n >= 3 ? { n } : undefined), {
    timeoutMs: 2000,
    intervalMs: 10,
    what: 'n>=3',
  });
  assert.equal(v, { n: 3 });
  assert.is(await waitFor(() => 0, { timeoutMs: 100, what: 'zero' }), 0, '0 is a value, not "not yet"');
});

test('waitFor times out with a clear message', async () => {
  const t0 = Date.now();
  try {
    await waitFor(
      async () => {
        throw new Error('boom-42');
      },
      { timeoutMs: 300, intervalMs: 50, what: 'the impossible' },
    );
    assert.unreachable('should have timed out');
  } catch (err) {
    const msg = (err as Error).message;
    assert.match(msg, /^timed out after 300ms waiting for the impossible/);
    assert.match(msg, /last error: boom-42/);
  }
  const elapsed = Date.now() - t0;
  assert.ok(elapsed >= 280 && elapsed < 1500, `elapsed ${elapsed}ms`);

  try {
    await waitFor(async () => false, { timeoutMs: 100, intervalMs: 20, what: 'false to turn true' });
    assert.unreachable('should have timed out');
  } catch (err) {
    assert.match(
      (err as Error).message,
      /timed out after 100ms waiting for false to turn true; last value: false/,
    );
  }

  // an attempt that hangs does not hold up the timeout
  const t1 = Date.now();
  try {
    await waitFor(() => new Promise<never>(() => {}), { timeoutMs: 200, what: 'a hung call' });
    assert.unreachable('should have timed out');
  } catch (err) {
    assert.match((err as Error).message, /timed out after 200ms waiting for a hung call/);
  }
  assert.ok(Date.now() - t1 < 1000);
  await sleep(1);
});

test.run();
