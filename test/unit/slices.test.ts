// suite-timeout: 60
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Slices } from '../../lib/slices.ts';

// The slices NATS deliveries run in (lib/slices.ts, docs/architecture.md#work-in-slices):
// order kept, the loop's sockets served between slices, a throw surfacing as it did without them.

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* a delivery's synchronous work */
  }
};

test('deliveries run in the order they came, and what they resolve runs between slices', async () => {
  const slices = new Slices(1);
  const seen: string[] = [];
  let release!: () => void;
  const waiting = new Promise<void>((r) => (release = r)).then(() => seen.push('continuation of 0'));
  for (let i = 0; i < 200; i++)
    slices.run(() => {
      seen.push(String(i));
      if (i === 0) release();
      busy(0.05);
    });
  await waiting;
  while (slices.depth > 0) await new Promise((r) => setImmediate(r));
  assert.equal(
    seen.filter((s) => !s.startsWith('c')),
    [...Array(200).keys()].map(String),
  );
  // What a delivery resolved runs between slices, not after the whole backlog.
  assert.ok(seen.indexOf('continuation of 0') < seen.indexOf('199'), seen.join(' '));
});

test('a TCP connection is accepted while a backlog of deliveries is still running', async () => {
  const server = net.createServer((s) => s.destroy());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  try {
    const slices = new Slices(10);
    let ran = 0;
    let ranWhenAccepted = -1;
    server.once('connection', () => (ranWhenAccepted = ran));
    const total = 100;
    let client: net.Socket | undefined;
    for (let i = 0; i < total; i++)
      slices.run(() => {
        // An agent connects while the backlog is being worked through.
        if (i === 0) client = net.connect(port, '127.0.0.1').on('error', () => {});
        ran++;
        busy(3);
      });
    while (slices.depth > 0 || ranWhenAccepted < 0) await new Promise((r) => setImmediate(r));
    client?.destroy();
    // Run in one burst, every delivery would come before the accept (the old behaviour).
    assert.ok(
      ranWhenAccepted < total,
      `accepted after ${ranWhenAccepted} of ${total} deliveries: the backlog held the loop`,
    );
  } finally {
    server.close();
  }
});

test('a delivery that throws surfaces as an uncaught exception and the queue goes on', async () => {
  const slices = new Slices();
  const caught = new Promise<Error>((resolve) => process.once('uncaughtException', resolve));
  const after: number[] = [];
  slices.run(() => {
    throw new Error('handler bug');
  });
  slices.run(() => after.push(1));
  const err = await caught;
  while (slices.depth > 0) await new Promise((r) => setImmediate(r));
  assert.is(err.message, 'handler bug');
  assert.equal(after, [1]);
});

test.run();
