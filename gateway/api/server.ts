import type { RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import { httpsOptions, verifyClientCertificate, type ApiServerTls } from './tls.ts';

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

/** HTTPS with the API's pair, client certificates checked before the app sees the request. */
const createTlsServer = (tls: ApiServerTls) => (opts: ServerOptions, listener?: RequestListener) =>
  createHttpsServer({ ...opts, ...httpsOptions(tls) }, verifyClientCertificate(listener!));

/**
 * Listens with the app on host:port (HTTPS when `tls` is given); resolves once listening, rejects
 * when the port is taken.
 */
export function listenApi(
  // Any app's environment will do: the server only calls its fetch.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app: Hono<any>,
  host: string,
  port: number,
  tls?: ApiServerTls,
): Promise<ApiListener> {
  return new Promise((resolve, reject) => {
    const where = { fetch: app.fetch, hostname: host.replace(/^\[|\]$/g, ''), port };
    const server: ServerType = serve(
      tls ? { ...where, createServer: createTlsServer(tls) as typeof createHttpsServer } : where,
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
