import * as net from 'node:net';
import type { ExecContext, HandlerSpec } from '../types.ts';
import type { KindResult } from './result.ts';

/** Seconds for dial plus write when the handler sets none (docs/compatibility.md#handlers). */
const DEFAULT_SOCKET_TIMEOUT = 60;
/** After our side is flushed, how long the peer gets to close before we drop the socket. */
const LINGER_MS = 1000;

export const socketTimeout = (spec: HandlerSpec) =>
  spec.timeout && spec.timeout > 0 ? spec.timeout : DEFAULT_SOCKET_TIMEOUT;

/**
 * A `tcp` handler: connect, write the payload, end. Done once everything is handed to the kernel
 * ('finish'); a peer that does not read fills the buffers and the timeout ends the attempt.
 */
export function tcpHandle(spec: HandlerSpec, payload: Buffer, ctx: ExecContext): Promise<KindResult> {
  const host = spec.socket?.host;
  const port = spec.socket?.port;
  if (!host || !port)
    return Promise.resolve({ ok: false, error: 'a tcp handler needs socket.host and socket.port' });
  const seconds = socketTimeout(spec);
  return new Promise((resolve) => {
    let done = false;
    const socket = net.connect({ host, port });
    const finish = (r: KindResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onAbort);
      if (r.ok) {
        const linger = setTimeout(() => socket.destroy(), LINGER_MS);
        linger.unref();
        socket.once('close', () => clearTimeout(linger));
      } else {
        socket.destroy();
      }
      resolve(r);
    };
    const timer = setTimeout(
      () => finish({ ok: false, error: `tcp ${host}:${port}: timed out after ${seconds} s` }),
      seconds * 1000,
    );
    const onAbort = () =>
      finish({ ok: false, error: `tcp ${host}:${port}: cancelled, the node is stopping` });
    if (ctx.signal?.aborted) return onAbort();
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (e) => finish({ ok: false, error: `tcp ${host}:${port}: ${e.message}` }));
    // Whatever the peer sends back is read and dropped, so closing never resets the connection over unread
    // data.
    socket.resume();
    socket.on('connect', () => socket.end(payload));
    socket.on('finish', () => finish({ ok: true }));
  });
}
