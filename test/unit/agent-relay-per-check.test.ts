import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryQueue } from '../../agent/outbox/memory.ts';
import { Relay, type Transport } from '../../agent/outbox/relay.ts';
import { RECOGNISED_WRITES_PER_CHECK } from '../../proto/frames.ts';
import { SIDE_APPLIED_LIMIT } from '../../actors/runtime/applied.ts';
import { createLogger } from '../../lib/log.ts';

// The relay keeps at most RECOGNISED_WRITES_PER_CHECK events of one check unacknowledged, so a resend
// after a long stall is still among the writes the backend remembers (docs/architecture.md#atomic-turns).
// Driven through a stand-in Transport (the relay's own interface) over the in-memory queue.

const event = (id: string, check?: string, entity = 'host-a') => ({
  id,
  entity: { metadata: { name: entity } },
  ...(check ? { check: { metadata: { name: check } } } : {}),
});

function rig(window = 100) {
  const store = new MemoryQueue();
  const sent: string[] = [];
  const transport: Transport & { connected: boolean } = {
    connected: true,
    send: (e) => {
      sent.push((e as { id: string }).id);
      return true;
    },
  };
  const relay = new Relay(store, transport, {
    rate: 10_000,
    burst: 10_000,
    window,
    log: createLogger('error', {}, () => {}),
  });
  const add = async (...events: Array<{ id: string }>) => {
    for (const e of events) relay.push(await store.append(e));
  };
  return { relay, store, sent, transport, add };
}

test('the agent waits at the number of writes per check the backend remembers', () => {
  assert.is(RECOGNISED_WRITES_PER_CHECK, SIDE_APPLIED_LIMIT);
});

test('at most RECOGNISED_WRITES_PER_CHECK events of one check unacknowledged; the line waits, in order', async () => {
  const r = rig();
  const n = RECOGNISED_WRITES_PER_CHECK;
  const ids = Array.from({ length: n + 3 }, (_, i) => `c${i}`);
  await r.add(...ids.map((id) => event(id, 'cpu')), event('other', 'disk'));
  assert.equal(r.sent, ids.slice(0, n), 'the ninth event of the check waits, and the line behind it');
  r.relay.ack({ id: 'c1', ok: true });
  assert.equal(r.sent.slice(n), [ids[n]], 'one answer frees one place');
  r.relay.ack({ id: 'c0', ok: true });
  r.relay.ack({ id: 'c2', ok: true });
  assert.equal(r.sent.slice(n + 1), [ids[n + 1], ids[n + 2], 'other']);
  r.relay.stop();
});

test('other checks and other entities have places of their own; events without a check are not counted', async () => {
  const r = rig();
  const n = RECOGNISED_WRITES_PER_CHECK;
  const batch = (prefix: string, check?: string, entity?: string) =>
    Array.from({ length: n }, (_, i) => event(`${prefix}${i}`, check, entity));
  await r.add(
    ...batch('a', 'cpu'),
    ...batch('b', 'disk'),
    ...batch('c', 'cpu', 'host-b'),
    ...batch('m'),
    ...batch('m2'),
  );
  assert.is(r.sent.length, 5 * n, 'nothing waits');
  r.relay.stop();
});

test('events put back (refused as retryable, or in flight at a disconnect) still count until answered', async () => {
  const r = rig();
  const n = RECOGNISED_WRITES_PER_CHECK;
  const ids = Array.from({ length: n + 1 }, (_, i) => `c${i}`);
  await r.add(...ids.map((id) => event(id, 'cpu')));
  assert.is(r.sent.length, n);
  // The connection drops: every event sent may have been applied; none is answered.
  r.transport.connected = false;
  r.relay.disconnected();
  r.transport.connected = true;
  r.relay.connected();
  assert.equal(r.sent.slice(n), ids.slice(0, n), 'resent in order, and still no ninth');
  // A retryable refusal puts c0 back in the line: it is still unanswered.
  r.relay.ack({ id: 'c0', ok: false, code: 'unavailable', message: 'moving' });
  for (let i = 1; i < n; i++) r.relay.ack({ id: `c${i}`, ok: true });
  await new Promise((res) => setTimeout(res, 600));
  assert.equal(r.sent.slice(2 * n), ['c0', `c${n}`], 'after the pause c0 first, then the ninth');
  // A refusal for good answers an event too.
  r.relay.ack({ id: 'c0', ok: false, code: 'invalid_argument', message: 'bad' });
  r.relay.ack({ id: `c${n}`, ok: true });
  assert.is(r.store.stats.queued, 0);
  r.relay.stop();
});

test.run();
