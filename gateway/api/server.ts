import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

/** Listens with the app on host:port; resolves once listening, rejects when the port is taken. */
// Any app's environment will do: the server only calls its fetch.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function listenApi(app: Hono<any>, host: string, port: number): Promise<{ close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server: ServerType = serve(
      { fetch: app.fetch, hostname: host.replace(/^\[|\]$/g, ''), port },
      () => {
        server.off('error', reject);
        resolve({
          close: () =>
            new Promise<void>((r) => {
              server.close(() => r());
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    server.once('error', reject);
  });
}
