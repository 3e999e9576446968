import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocketServer, type WebSocket } from 'ws';
import { BackendConnection } from '../../agent/connection.ts';
import { createLogger } from '../../lib/log.ts';

// A backend closing an open connection with 1001 "going away" is stopping in order: the agent tries
// its next URL at once (within 250 ms), while other closes keep the backoff; a backend that keeps
// sending the agent away gets the backoff again after a few quick tries.

interface FakeBackend {
  url: string;
  /** Sockets accepted so far, in order. */
  accepted: WebSocket[];
  /** What each new socket gets right after it opened: nothing, or a close with this code. */
  closeWith?: number;
  close(): Promise<void>;
}

async function fakeBackend(closeWith?: number): Promise<FakeBackend> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const b: FakeBackend = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    accepted: [],
    closeWith,
    close: () =>
      new Promise<void>((r) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => r());
      }),
  };
  wss.on('connection', (ws) => {
    b.accepted.push(ws);
    if (b.closeWith !== undefined) setTimeout(() => ws.close(b.closeWith, 'bye'), 20);
  });
  return b;
}

function connection(urls: string[], lines: string[]) {
  return new BackendConnection({
    urls,
    namespace: 'default',
    agentName: 'a1',
    user: 'agent',
    password: 'secret',
    subscriptions: [],
    handshakeTimeout: 5,
    heartbeatInterval: 30,
    heartbeatTimeout: 120,
    // A long backoff: any reconnection well under it came from the going-away path.
    retry: { min: 5, max: 10, multiplier: 2 },
    logger: createLogger('debug', {}, (line) => lines.push(line)),
    // Keeps the URL order as given and draws the jitter at its top.
    random: () => 0.999,
  });
}

const waitUntil = async (cond: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
};

test('a 1001 close of an open connection: the next URL within 250 ms, not after the backoff', async () => {
  const [leaving, staying] = [await fakeBackend(1001), await fakeBackend()];
  const conn = connection([leaving.url, staying.url], []);
  const disconnects: Array<{ code: number; retryIn?: number }> = [];
  conn.on('disconnected', (d) => disconnects.push(d));
  try {
    conn.start();
    assert.ok(await waitUntil(() => leaving.accepted.length === 1, 2000), 'first backend reached');
    const closedAt = Date.now();
    assert.ok(await waitUntil(() => staying.accepted.length === 1 && conn.connected, 2000), 'reconnected');
    const took = Date.now() - closedAt;
    assert.ok(took < 1000, `reconnected after ${took} ms`);
    assert.is(disconnects[0]?.code, 1001);
    assert.ok(disconnects[0]!.retryIn! <= 0.25, `retry in ${disconnects[0]!.retryIn}s`);
  } finally {
    await conn.close();
    await Promise.all([leaving.close(), staying.close()]);
  }
});

test('another close code (1011) waits for the backoff', async () => {
  const [failing, staying] = [await fakeBackend(1011), await fakeBackend()];
  const conn = connection([failing.url, staying.url], []);
  const disconnects: Array<{ code: number; retryIn?: number }> = [];
  conn.on('disconnected', (d) => disconnects.push(d));
  try {
    conn.start();
    assert.ok(await waitUntil(() => disconnects.length === 1, 2000), 'closed');
    assert.is(disconnects[0]!.code, 1011);
    assert.ok(disconnects[0]!.retryIn! >= 5, `retry in ${disconnects[0]!.retryIn}s`);
    await new Promise((r) => setTimeout(r, 1000));
    assert.is(staying.accepted.length, 0, 'no attempt before the backoff');
  } finally {
    await conn.close();
    await Promise.all([failing.close(), staying.close()]);
  }
});

test('a backend that keeps sending the agent away gets the backoff after three quick retries', async () => {
  const leaving = await fakeBackend(1001);
  const conn = connection([leaving.url], []);
  const disconnects: Array<{ code: number; retryIn?: number }> = [];
  conn.on('disconnected', (d) => disconnects.push(d));
  try {
    conn.start();
    assert.ok(await waitUntil(() => disconnects.length === 4, 3000), `${disconnects.length} closes`);
    const waits = disconnects.map((d) => d.retryIn!);
    assert.ok(
      waits.slice(0, 3).every((w) => w <= 0.25),
      `quick: ${waits.join(', ')}`,
    );
    assert.ok(waits[3]! >= 5, `then the backoff: ${waits[3]}`);
  } finally {
    await conn.close();
    await leaving.close();
  }
});

test.run();
