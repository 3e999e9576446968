// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { startBackend, startEtcd, startNats, waitFor, type Backend } from '../harness/index.ts';

// The legacy API while our stores fail (our addition to its contract, docs/compatibility.md#request-handling):
// a write the events store cannot take is a 500 with `{"error": ...}` (never a 202 for a result that
// was not stored; after a 500 the result may still land once the store is back), and with NATS gone every route but /info and /health is a 500 `{"error":"not
// connected to transport"}` while /health says 412 and /info says `connected: false`; all of it mends
// when the store is back. The failures are real: the events bucket's subjects detached from its
// stream (as while the stream has no leader), then the nats-server stopped.

const EVENTS_STREAM = 'KV_monitor_events';
let etcd: Awaited<ReturnType<typeof startEtcd>>;
let nats: Awaited<ReturnType<typeof startNats>>;
let backend: Backend;
let nc: NatsConnection | undefined;
let jsm: JetStreamManager;

async function setEventsAttached(attached: boolean): Promise<void> {
  const info = await jsm.streams.info(EVENTS_STREAM);
  await jsm.streams.update(EVENTS_STREAM, {
    ...info.config,
    subjects: [attached ? '$KV.monitor_events.>' : 'detached.monitor_events.>'],
  });
}

async function call(path: string, init: RequestInit = {}) {
  const r = await fetch(backend.legacyUrl + path, {
    ...init,
    headers: { 'Content-Type': 'application/json' },
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, text: await r.text() };
}

const result = (name: string) =>
  ({
    method: 'POST',
    body: JSON.stringify({ name, output: 'x', status: 2, source: 'outage-host' }),
  }) as const;

test.before(async () => {
  [etcd, nats] = await Promise.all([startEtcd(), startNats()]);
  backend = await startBackend({
    name: 'legacy-outage',
    etcdUrl: etcd.url,
    natsUrl: nats.url,
    logLevel: 'info',
  });
  nc = await connect({ servers: nats.url });
  jsm = await nc.jetstreamManager();
});

test.after(async () => {
  if (nc && !nc.isClosed()) await setEventsAttached(true).catch(() => {});
  await nc?.close().catch(() => {});
  await backend?.stop();
  await Promise.all([nats?.stop(), etcd?.stop()]);
});

test('a result the events store cannot take is a 500 {"error"}, never a 202; results are taken again once it is back', async () => {
  assert.is((await call('/results', result('before'))).status, 202);
  await setEventsAttached(false);
  const refused = await call('/results', result('during'));
  assert.is(refused.status, 500, refused.text);
  assert.type((JSON.parse(refused.text) as { error: unknown }).error, 'string');
  await setEventsAttached(true);
  await waitFor(async () => ((await call('/results', result('after'))).status === 202 ? true : undefined), {
    timeoutMs: 20_000,
    what: 'a result taken again',
  });
  const listed = JSON.parse((await call('/results/outage-host')).text) as Array<{ check: { name: string } }>;
  const names = listed.map((r) => r.check.name);
  // Every 202 is stored. The 500 means the outcome is unknown: the actor may still finish the turn it
  // began once the store is back (docs/compatibility.md#request-handling).
  for (const n of ['before', 'after']) assert.ok(names.includes(n), `${n} stored: ${names}`);
});

test('with NATS gone: 500 "not connected to transport", /health 412, /info connected false; mended when it is back', async () => {
  await nc!.close();
  const { port, storeDir } = nats;
  await nats.stop();
  await waitFor(async () => ((await call('/health')).status === 412 ? true : undefined), {
    timeoutMs: 20_000,
    what: '/health to say 412',
  });
  assert.equal(JSON.parse((await call('/health')).text), ['not connected to transport']);
  for (const path of ['/events', '/clients', '/stashes', '/checks']) {
    const r = await call(path);
    assert.is(r.status, 500, path);
    assert.equal(JSON.parse(r.text), { error: 'not connected to transport' }, path);
  }
  const info = await call('/info');
  assert.is(info.status, 200);
  const body = JSON.parse(info.text) as { transport: { connected: boolean }; redis: { connected: boolean } };
  assert.is(body.transport.connected, false);
  assert.is(body.redis.connected, false);

  nats = await startNats({ port, storeDir });
  await waitFor(async () => ((await call('/health')).status === 204 ? true : undefined), {
    timeoutMs: 30_000,
    what: '/health 204 again',
  });
  assert.is((await call('/events')).status, 200);
});

test.run();
