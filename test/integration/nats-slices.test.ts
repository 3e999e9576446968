// suite-timeout: 60
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startNats, waitFor } from '../harness/index.ts';
import { NatsAdapter } from '../../actors/runtime/nats.ts';

// Deliveries through the NATS adapter run in slices (docs/architecture.md#work-in-slices); a
// subscription that ends must still end at once, as it did when deliveries ran in the socket's
// callback: a shard handed off may not start a turn from a message that waited for its slice.

let nats: Awaited<ReturnType<typeof startNats>>;
let a: NatsAdapter;
let b: NatsAdapter;

test.before(async () => {
  nats = await startNats();
  [a, b] = await Promise.all([
    NatsAdapter.connect({ servers: [nats.url], name: 'slices-sub' }),
    NatsAdapter.connect({ servers: [nats.url], name: 'slices-pub' }),
  ]);
});

test.after(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await nats?.stop();
});

test('no message is delivered after unsubscribe, even one already waiting for its slice', async () => {
  const seen: number[] = [];
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      /* a turn's synchronous work */
    }
  };
  let unsubscribedAfter = -1;
  const sub = a.subscribe('slices.t', (m) => {
    const n = Number(Buffer.from(m.data).toString());
    seen.push(n);
    busy(1);
    if (n === 10) {
      sub.unsubscribe();
      unsubscribedAfter = seen.length;
    }
  });
  await a.ping();
  for (let i = 0; i < 2000; i++) b.publish('slices.t', Buffer.from(String(i)));
  await b.ping();
  await waitFor(() => unsubscribedAfter > 0, { timeoutMs: 10_000, what: 'the tenth message' });
  // Give anything still queued its slices.
  await new Promise((r) => setTimeout(r, 500));
  assert.is(seen.length, unsubscribedAfter, `${seen.length - unsubscribedAfter} delivered after unsubscribe`);
});

test('messages and replies keep their order through the slices', async () => {
  const got: number[] = [];
  const sub = a.subscribe('slices.order', (m) => got.push(Number(Buffer.from(m.data).toString())));
  await a.ping();
  for (let i = 0; i < 5000; i++) b.publish('slices.order', Buffer.from(String(i)));
  await b.ping();
  await waitFor(() => got.length === 5000, { timeoutMs: 10_000, what: 'every message' });
  sub.unsubscribe();
  assert.equal(got, [...Array(5000).keys()]);
});

test.run();
