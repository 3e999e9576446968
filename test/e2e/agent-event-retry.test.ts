// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import {
  getJson,
  startAgent,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { coreApi, type Body } from '../harness/api.ts';

// An agent learns at once when its event was not stored (docs/architecture.md, "Who retries"): the
// backend answers `ok: false, code: unavailable` to an agent that announced `ack-retry`, and the
// agent keeps the event and resends it after a backoff instead of its 30 s acknowledgement timeout.
//
// The store failure is real: the events bucket's subjects are detached from its stream (a stream
// config update), so writes to it get no responders, as while the stream has no leader after a
// nats-server died; re-attaching brings it back with its data.

const EVENTS_STREAM = 'KV_monitor_events';
let etcd: Awaited<ReturnType<typeof startEtcd>>;
let nats: Awaited<ReturnType<typeof startNats>>;
let backend: Backend;
let agent: AgentProc;
let nc: NatsConnection;
let jsm: JetStreamManager;
const api = coreApi(() => backend);

async function setEventsAttached(attached: boolean): Promise<void> {
  const info = await jsm.streams.info(EVENTS_STREAM);
  await jsm.streams.update(EVENTS_STREAM, {
    ...info.config,
    subjects: [attached ? '$KV.monitor_events.>' : 'detached.monitor_events.>'],
  });
}

test.before(async () => {
  [etcd, nats] = await Promise.all([startEtcd(), startNats()]);
  backend = await startBackend({ name: 'event-retry', etcdUrl: etcd.url, natsUrl: nats.url });
  nc = await connect({ servers: nats.url });
  jsm = await nc.jetstreamManager();
  agent = await startAgent({ name: 'retry-agent', backendUrls: backend.agentUrl, logLevel: 'info' });
  await waitFor(
    async () =>
      (await api(`/namespaces/default/events/retry-agent/keepalive`)).status === 200 ? true : undefined,
    { timeoutMs: 20000, what: 'the agent keepalive' },
  );
});

test.after(async () => {
  await setEventsAttached(true).catch(() => {});
  await agent?.stop();
  await backend?.stop();
  await nc?.close();
  await Promise.all([nats?.stop(), etcd?.stop()]);
});

test('an event the backend cannot store is refused as retryable, kept by the agent, and stored once when the store is back', async () => {
  await setEventsAttached(false);
  const from = agent.proc.lineCount;
  const r = await getJson(`${agent.apiUrl}/events`, {
    method: 'POST',
    body: {
      check: {
        metadata: { name: 'during-outage' },
        status: 1,
        output: 'sent while the events bucket is away',
      },
    },
  });
  assert.ok(r.status >= 200 && r.status < 300, `the agent accepts the event: ${r.status}`);
  // The backend's answer reaches the agent in seconds (5 s session deadline), not 30 s.
  const line = await agent.proc.waitForLine((l) => l.includes('could not store events for now'), 15_000, {
    fromLine: from,
  });
  assert.match(line, /unavailable/);
  await setEventsAttached(true);
  const stored = await waitFor(
    async () => {
      const e = await api<Body>('/namespaces/default/events/retry-agent/during-outage');
      return e.status === 200 ? e.body : undefined;
    },
    { timeoutMs: 20_000, what: 'the event stored after the bucket came back' },
  );
  assert.is(stored.check.history.length, 1, 'stored once');
  assert.is(stored.check.status, 1);
});

test.run();
