import type { Server } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

const DEFAULTS = {
  /** While stopping, idle keep-alive connections are closed this often, so each ends after its answer. */
  idleSweepMs: 50,
} as const;

export interface ApiListener {
  /**
   * Takes no new connection (refused, so a balancer's redispatch sends it to another node), lets the
   * requests under way finish for up to `graceMs`, then closes every connection left (a live event
   * stream, a request still waiting).
   */
  close(graceMs?: number): Promise<void>;
}

/** Listens with the app on host:port; resolves once listening, rejects when the port is taken. */
// Any app's environment will do: the server only calls its fetch.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function listenApi(app: Hono<any>, host: string, port: number): Promise<ApiListener> {
  return new Promise((resolve, reject) => {
    const server: ServerType = serve(
      { fetch: app.fetch, hostname: host.replace(/^\[|\]$/g, ''), port },
      () => {
        server.off('error', reject);
        let closing: Promise<void> | undefined;
        resolve({ close: (graceMs = 0) => (closing ??= closeGracefully(server as Server, graceMs)) });
      },
    );
    server.once('error', reject);
  });
}

async function closeGracefully(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((r) => server.close(() => r()));
  const sweep = setInterval(() => server.closeIdleConnections(), DEFAULTS.idleSweepMs);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
  clearInterval(sweep);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}
