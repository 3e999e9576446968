import net from 'node:net';
import { once } from 'node:events';
import { freePort } from './ports.ts';

/**
 * A TCP relay on a free loopback port to `target`, whose connections the test can cut at once, as
 * a network failure would: for what must survive a dropped connection (a live stream's resume).
 */
interface TcpCut {
  url: string;
  /** Destroys every connection relayed so far; new ones are relayed again unless held. */
  cutAll(): number;
  /** While held, a new connection is closed at once, as during an outage. */
  hold(on: boolean): void;
  close(): Promise<void>;
}

export async function startTcpCut(target: URL | string): Promise<TcpCut> {
  const to = new URL(target);
  const sockets = new Set<net.Socket>();
  let held = false;
  const server = net.createServer((client) => {
    if (held) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(to.port), to.hostname.replace(/^\[|\]$/g, ''));
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await freePort();
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `${to.protocol}//127.0.0.1:${port}`,
    cutAll: () => {
      const n = sockets.size;
      for (const s of sockets) s.destroy();
      return n;
    },
    hold: (on) => {
      held = on;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
