import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryQueue } from '../../agent/outbox/memory.ts';
import { Relay, RETRY_BACKOFF_MS, type RelayOptions, type Transport } from '../../agent/outbox/relay.ts';
import type { BackoffOptions } from '../../agent/backoff.ts';
import { createLogger } from '../../lib/log.ts';

// Acks refused with a retryable code (`unavailable`): the relay keeps the event, puts it back in the
// line in order, and pauses sending for a growing backoff that an accepted event resets. Driven
// through a stand-in Transport (the relay's own interface) over the in-memory queue.

type Line = { level: string; msg: string } & Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

interface Rig {
  relay: Relay;
  store: MemoryQueue;
  sent: string[];
  /** When each send happened, same order as `sent`. */
  sentAt: number[];
  lines: Line[];
  pauses: () => number[];
  warnings: () => Line[];
  add: (...ids: string[]) => Promise<void>;
}

/** No jitter by default, so every pause is exactly the backoff's current wait. */
function rig(
  opts: Partial<RelayOptions> = {},
  retryBackoff: Partial<BackoffOptions> = { min: 20, max: 80, multiplier: 2, random: () => 0 },
): Rig {
  const lines: Line[] = [];
  const log = createLogger('debug', {}, (line) => {
    lines.push(JSON.parse(line));
  });
  const store = new MemoryQueue();
  const sent: string[] = [];
  const sentAt: number[] = [];
  const transport: Transport = {
    connected: true,
    send: (e) => {
      sent.push((e as { id: string }).id);
      sentAt.push(Date.now());
      return true;
    },
  };
  const relay = new Relay(store, transport, {
    rate: 10_000,
    burst: 10_000,
    window: 100,
    log,
    retryBackoff,
    ...opts,
  });
  return {
    relay,
    store,
    sent,
    sentAt,
    lines,
    pauses: () =>
      lines
        .filter((l) => l.msg === 'pausing event sends after a retryable refusal')
        .map((l) => l.retry_in_ms as number),
    warnings: () => lines.filter((l) => l.level === 'warn'),
    add: async (...ids) => {
      for (const id of ids) relay.push(await store.append({ id }));
    },
  };
}

const nack = (id: string, code = 'unavailable') => ({ id, ok: false, code, message: 'stream leader lost' });

test('a retryable refusal keeps the event and resends it after the pause, before later events, window still applied', async () => {
  const r = rig({ window: 3 });
  await r.add('a', 'b', 'c', 'd', 'e');
  assert.equal(r.sent, ['a', 'b', 'c']);
  const t0 = Date.now();
  // Refused newest first: the line must still read a, b, then the rest.
  r.relay.ack(nack('b'));
  r.relay.ack(nack('a'));
  assert.is(r.store.stats.queued, 5, 'nothing was dropped from the queue');
  assert.is(r.relay.retried, 2);
  assert.is(r.relay.rejected, 0);
  assert.ok(r.relay.paused);
  r.relay.ack({ id: 'c', ok: true });
  assert.equal(r.sent, ['a', 'b', 'c'], 'nothing is sent while paused, even with room in the window');
  await until('resend', () => r.sent.length > 3);
  assert.equal(
    r.sent.slice(3),
    ['a', 'b', 'd'],
    'refused events first, in order, then the next one; window of 3',
  );
  assert.ok(r.sentAt[3]! - t0 >= 18, `resent after ${r.sentAt[3]! - t0} ms, the pause is 20 ms`);
  assert.equal(r.pauses(), [20], 'one pause for one round of refusals');
  for (const id of ['a', 'b', 'd']) r.relay.ack({ id, ok: true });
  assert.equal(r.sent.slice(6), ['e']);
  r.relay.ack({ id: 'e', ok: true });
  assert.is(r.store.stats.queued, 0);
  assert.equal([r.relay.sent, r.relay.acked, r.relay.retried, r.relay.rejected], [7, 5, 2, 0]);
  r.relay.stop();
});

test('refusals of resent events grow the pause up to the cap; an accepted event resets it', async () => {
  const r = rig();
  await r.add('a');
  for (let round = 0; round < 5; round++) {
    await until(`send ${round + 1}`, () => r.sent.length === round + 1);
    r.relay.ack(nack('a'));
  }
  await until('sixth send', () => r.sent.length === 6);
  assert.equal(r.pauses(), [20, 40, 80, 80, 80], 'doubling from 20 ms, capped at 80 ms');
  assert.equal(r.sent, ['a', 'a', 'a', 'a', 'a', 'a']);
  assert.is(r.warnings().length, 1, 'one warning for the whole episode');
  assert.match(r.warnings()[0]!.msg, /could not store events/);
  assert.is(r.warnings()[0]!.code, 'unavailable');

  r.relay.ack({ id: 'a', ok: true });
  const back = r.lines.find((l) => l.msg === 'backend stores events again');
  assert.ok(back && back.level === 'info' && back.retried === 5, JSON.stringify(back));
  await r.add('b');
  r.relay.ack(nack('b'));
  assert.equal(r.pauses().at(-1), 20, 'the next refusal starts again from the shortest pause');
  assert.is(r.warnings().length, 2, 'a new episode warns again');
  r.relay.stop();
});

test('a failover burst: hundreds of refusals, one pause, one warning, every event resent in order', async () => {
  const r = rig({ window: 300 });
  const ids = Array.from({ length: 250 }, (_, i) => `e${i}`);
  await r.add(...ids);
  assert.is(r.sent.length, 250);
  // Refusals arrive in no particular order (many shards, many streams).
  for (const id of [...ids].reverse()) r.relay.ack(nack(id));
  assert.is(r.relay.retried, 250);
  assert.is(r.store.stats.queued, 250);
  assert.equal(r.pauses(), [20]);
  assert.is(r.warnings().length, 1);
  await until('all resent', () => r.sent.length === 500);
  assert.equal(r.sent.slice(250), ids);
  r.relay.stop();
});

test('a late refusal of an event sent before the pause does not pause again', async () => {
  const r = rig({ window: 3 });
  await r.add('a', 'b', 'c');
  r.relay.ack(nack('a'));
  await until('a resent', () => r.sent.length === 4);
  // 'b' went out before the pause began: its refusal is old news, so it is resent at once.
  r.relay.ack(nack('b'));
  assert.not.ok(r.relay.paused);
  assert.equal(r.sent, ['a', 'b', 'c', 'a', 'b']);
  assert.equal(r.pauses(), [20]);
  // A refusal of the resent 'a' is fresh evidence: the pause grows.
  r.relay.ack(nack('a'));
  assert.equal(r.pauses(), [20, 40]);
  r.relay.stop();
});

test('a disconnect during a pause: the refused and the unacknowledged events all go out in order after it', async () => {
  const lines: Line[] = [];
  const log = createLogger('debug', {}, (line) => {
    lines.push(JSON.parse(line));
  });
  const store = new MemoryQueue();
  const sent: string[] = [];
  const link = { connected: true };
  const transport: Transport = {
    get connected() {
      return link.connected;
    },
    send: (e) => {
      if (!link.connected) return false;
      sent.push((e as { id: string }).id);
      return true;
    },
  };
  const relay = new Relay(store, transport, {
    rate: 1000,
    burst: 1000,
    window: 3,
    log,
    retryBackoff: { min: 30, max: 60, random: () => 0 },
  });
  for (const id of ['a', 'b', 'c', 'd']) relay.push(await store.append({ id }));
  relay.ack(nack('b'));
  link.connected = false;
  relay.disconnected();
  link.connected = true;
  relay.connected();
  assert.equal(sent, ['a', 'b', 'c'], 'still paused after the reconnect');
  await until('resends', () => sent.length === 6);
  assert.equal(sent.slice(3), ['a', 'b', 'c']);
  relay.ack({ id: 'b', ok: true });
  assert.equal(sent.slice(6), ['d']);
  relay.stop();
});

test('the rate limit still applies to events resent after a pause', async () => {
  const r = rig({ rate: 20, burst: 2 });
  await r.add('a', 'b', 'c');
  assert.equal(r.sent, ['a', 'b']);
  r.relay.ack(nack('a'));
  r.relay.ack(nack('b'));
  await until('resends', () => r.sent.length === 5, 2000);
  assert.equal(r.sent.slice(2), ['a', 'b', 'c']);
  // The burst was spent at the start, so the resends come at 20/s: about 50 ms apart.
  assert.ok(r.sentAt[4]! - r.sentAt[2]! >= 80, `three sends took ${r.sentAt[4]! - r.sentAt[2]!} ms`);
  r.relay.stop();
});

test('every other refusal is still dropped for good with a warning', async () => {
  const r = rig();
  await r.add('a', 'b', 'c');
  r.relay.ack(nack('a', 'invalid'));
  r.relay.ack({ id: 'b', ok: false });
  r.relay.ack(nack('c', 'some-new-code'));
  assert.is(r.store.stats.queued, 0);
  assert.is(r.relay.rejected, 3);
  assert.is(r.relay.retried, 0);
  assert.not.ok(r.relay.paused);
  assert.is(r.warnings().filter((l) => /refused an event for good/.test(l.msg)).length, 3);
  await r.add('d');
  assert.equal(r.sent, ['a', 'b', 'c', 'd'], 'no pause');
  r.relay.stop();
});

test('stop() during a pause leaves no timer and sends nothing more', async () => {
  const before = process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;
  const r = rig({}, { min: 50, max: 100, multiplier: 2, random: () => 0 });
  await r.add('a');
  r.relay.ack(nack('a'));
  assert.ok(r.relay.paused);
  assert.is(
    process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length,
    before + 1,
    'the pause timer',
  );
  r.relay.stop();
  assert.not.ok(r.relay.paused);
  assert.is(process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length, before);
  await sleep(120);
  assert.equal(r.sent, ['a']);
});

test('default backoff: 250 ms doubling to 10 s; the first pause is 250 to 500 ms with jitter', async () => {
  assert.equal(RETRY_BACKOFF_MS, { min: 250, max: 10_000, multiplier: 2 });
  const r = rig({}, {});
  await r.add('a');
  r.relay.ack(nack('a'));
  const [first] = r.pauses();
  assert.ok(first! >= 250 && first! <= 500, `first pause ${first} ms`);
  r.relay.stop();
});

test.run();
