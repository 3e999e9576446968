// suite-timeout: 300
// suite-exclusive: /ready windows while etcd and NATS go away: timing
/**
 * Readiness and liveness (docs/architecture.md#readiness-and-liveness): `/ready` is 200 only while
 * the node is a member holding its shards with etcd and NATS in reach, and otherwise 503 naming what
 * fails; `/health` stays 200 while the process serves. A graceful stop answers 503 first.
 *
 * Set-up: b1 and b2 on a three-node NATS cluster and one etcd. A NATS client learns the other
 * servers of a cluster and moves to them, so the NATS outage is shown on b3, a backend of its own
 * cluster with a single nats-server and a single etcd, which are stopped and started again.
 */
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  sleep,
  startBackend,
  startEtcd,
  startNats,
  startNatsCluster,
  waitFor,
  type Backend,
  type EtcdServer,
  type NatsCluster,
  type NatsServer,
} from '../harness/index.ts';

let etcd: EtcdServer | undefined;
let nats: NatsCluster | undefined;
let soloEtcd: EtcdServer | undefined;
let soloNats: NatsServer | undefined;
const backends = new Map<string, Backend>();

interface Ready {
  status: number;
  ready?: boolean;
  reasons: string[];
}

const ready = async (b: Backend): Promise<Ready> => {
  const r = await b.ready();
  return { status: r.status, ready: r.body?.ready, reasons: r.body?.reasons ?? [] };
};

const waitReady = (b: Backend, what: string, timeoutMs = 60_000) =>
  waitFor(async () => ((await ready(b).catch(() => undefined))?.status === 200 ? true : undefined), {
    timeoutMs,
    intervalMs: 250,
    what,
  });

/** Waits for a 503 whose reasons include one starting with `prefix`; answers that answer. */
const waitNotReady = (b: Backend, prefix: string, timeoutMs = 30_000) =>
  waitFor(
    async () => {
      const r = await ready(b).catch(() => undefined);
      return r?.status === 503 && r.reasons.some((x) => x.startsWith(prefix)) ? r : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `${b.name} /ready 503 with a "${prefix}" reason` },
  );

test.before(async () => {
  [etcd, nats, soloEtcd, soloNats] = await Promise.all([
    startEtcd(),
    startNatsCluster({ size: 3 }),
    startEtcd({ name: 'solo' }),
    startNats(),
  ]);
  const clustered = (name: string) =>
    startBackend({
      name,
      etcdUrl: etcd!.url,
      natsUrl: nats!.urls.join(','),
      logLevel: 'info',
      extraArgs: ['--nats-replicas', '3'],
      readyTimeoutMs: 60_000,
    });
  // The first creates the replicated buckets and streams; the next finds them.
  backends.set('b1', await clustered('b1'));
  backends.set('b2', await clustered('b2'));
  backends.set(
    'b3',
    await startBackend({ name: 'b3', etcdUrl: soloEtcd!.url, natsUrl: soloNats!.url, logLevel: 'info' }),
  );
});

test.after(async () => {
  for (const b of backends.values()) await b.kill().catch(() => {});
  await Promise.all([etcd?.stop(), nats?.stopAll(), soloEtcd?.stop(), soloNats?.stop()]);
});

test('once settled, /ready is 200 on every node with no reason, and /health is 200 with its report', async () => {
  for (const b of backends.values()) await waitReady(b, `${b.name} ready`);
  for (const b of backends.values()) {
    const r = await ready(b);
    assert.equal(r, { status: 200, ready: true, reasons: [] }, b.name);
    const h = await b.health();
    assert.is(h.status, 200, `${b.name} /health`);
    assert.is(h.body.node, b.name);
    assert.is(h.body.etcd.healthy, true);
    assert.is(h.body.nats.healthy, true);
    assert.is(h.body.ready.ready, true);
    assert.is(h.body.shards.total, 256);
  }
  // b1 and b2 share the shards of their cluster; b3 holds all of its own.
  const owned = await Promise.all(['b1', 'b2'].map(async (n) => (await backends.get(n)!.health()).body));
  assert.equal(owned[0].members, ['b1', 'b2']);
  assert.is(owned[0].shards.owned + owned[1].shards.owned, 256);
  assert.is((await backends.get('b3')!.health()).body.shards.owned, 256);
});

test('NATS out of reach: /ready 503 with a nats reason while /health stays 200; 200 again once it is back', async () => {
  const b3 = backends.get('b3')!;
  const { port, storeDir } = soloNats!;
  await soloNats!.stop();
  const r = await waitNotReady(b3, 'nats:');
  assert.ok(r.reasons.includes('nats: disconnected'), r.reasons.join('; '));
  assert.is(r.ready, false);
  const h = await b3.health();
  assert.is(h.status, 200, '/health while NATS is away');
  assert.is(h.body.nats.healthy, false);
  assert.is(h.body.ready.ready, false);
  soloNats = await startNats({ port, storeDir });
  await waitReady(b3, 'b3 ready again after nats-server came back', 30_000);
  assert.is((await b3.health()).body.nats.healthy, true);
});

test('etcd out of reach: /ready 503 naming etcd while /health stays 200; 200 again once it is back', async () => {
  const b3 = backends.get('b3')!;
  const { clientPort, peerPort, dataDir, name } = soloEtcd!;
  await soloEtcd!.stop();
  const r = await waitNotReady(b3, 'etcd:');
  assert.is(r.ready, false);
  const h = await b3.health();
  assert.is(h.status, 200, '/health while etcd is away');
  assert.is(h.body.etcd.healthy, false);
  // Past the lease guard the node stops being a member and drops its shards; still alive.
  await waitNotReady(b3, 'membership:', 20_000);
  assert.is((await b3.health()).status, 200, '/health once the guard ran out');
  soloEtcd = await startEtcd({ name, clientPort, peerPort, dataDir });
  await waitReady(b3, 'b3 ready again after etcd came back', 90_000);
  assert.is((await b3.health()).body.shards.owned, 256);
});

test('a graceful stop: /ready answers 503 "node: stopping" before the process exits, which is 0', async () => {
  const b2 = backends.get('b2')!;
  await waitReady(b2, 'b2 ready before the stop');
  const seen: Array<Ready & { at: number }> = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const r = await ready(b2).catch(() => undefined);
      if (r) seen.push({ ...r, at: Date.now() });
      await sleep(25);
    }
  })();
  await sleep(200);
  const signalledAt = Date.now();
  const exit = await b2.stop(30_000);
  const exitedAt = Date.now();
  polling = false;
  await poller;
  backends.delete('b2');
  const firstNotReady = seen.find((r) => r.status === 503);
  console.log(
    `[readiness] b2 stopped in ${exitedAt - signalledAt} ms (exit ${exit.code}); first 503 after ${firstNotReady ? firstNotReady.at - signalledAt : '-'} ms; ${seen.length} answers polled`,
  );
  assert.is(exit.code, 0, `exit ${JSON.stringify(exit)}`);
  assert.ok(exitedAt - signalledAt < 20_000, `stopped in ${exitedAt - signalledAt} ms`);
  const first503 = seen.findIndex((r) => r.status === 503);
  assert.ok(first503 >= 0, `a 503 was seen among ${seen.length} answers`);
  assert.ok(seen[first503]!.reasons.includes('node: stopping'), seen[first503]!.reasons.join('; '));
  assert.ok(seen[first503]!.at < exitedAt);
  assert.ok(
    seen.slice(first503).every((r) => r.status === 503),
    'no 200 after the first 503',
  );
  // Not ready came first: the log of the stop shows draining before any service stopped, the
  // shard handoff before leaving the cluster, and NATS and etcd closed last.
  const lines = b2.logs();
  const at = (pred: (l: Record<string, any>) => boolean, what: string) => {
    const i = lines.findIndex(pred);
    assert.ok(i >= 0, `log line: ${what}`);
    return i;
  };
  const draining = at((l) => String(l.msg).startsWith('draining'), 'draining');
  const stopped = (s: string) => at((l) => l.msg === 'service stopped' && l.service === s, `${s} stopped`);
  assert.ok(draining < stopped('api'), 'draining before the API stopped');
  assert.ok(stopped('agents') < stopped('shards'), 'agents before the handoff');
  assert.ok(stopped('pipeline') < stopped('membership'), 'pipeline jobs before leaving');
  assert.ok(stopped('shards') < stopped('membership'), 'handoff before leaving');
  assert.ok(stopped('membership') < stopped('nats'), 'leaving before NATS closed');
  assert.ok(stopped('nats') < stopped('etcd'), 'NATS before etcd');
  // The other node takes every shard, and is ready with them.
  const b1 = backends.get('b1')!;
  await waitFor(async () => ((await b1.health()).body.shards.owned === 256 ? true : undefined), {
    timeoutMs: 30_000,
    what: 'b1 owning every shard',
  });
  await waitReady(b1, 'b1 ready alone', 30_000);
});

test('a stop that passes --shutdown-timeout (etcd frozen) exits 1 at the bound', async () => {
  const old = backends.get('b3')!;
  await old.stop();
  const b3 = await startBackend({
    ...old.options,
    extraArgs: [...(old.options.extraArgs ?? []), '--shutdown-timeout', '3'],
  });
  backends.set('b3', b3);
  await waitReady(b3, 'b3 ready with --shutdown-timeout 3');
  // A frozen etcd answers nothing: the handoff's etcd calls wait for their 5 s deadline.
  await soloEtcd!.proc.send('SIGSTOP');
  try {
    const signalledAt = Date.now();
    const exit = await b3.stop(15_000);
    const took = Date.now() - signalledAt;
    backends.delete('b3');
    console.log(`[readiness] b3 with etcd frozen exited ${exit.code} after ${took} ms`);
    assert.is(exit.code, 1, `exit ${JSON.stringify(exit)}`);
    assert.ok(took >= 3000 && took < 6000, `exited after ${took} ms`);
    assert.ok(
      b3.logs().some((l) => l.msg === 'shutdown took too long, exiting' && l.timeout_seconds === 3),
      'the bound is logged',
    );
  } finally {
    await soloEtcd!.proc.send('SIGCONT');
  }
});

test.run();
