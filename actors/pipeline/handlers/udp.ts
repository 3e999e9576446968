import * as dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import type { ExecContext, HandlerSpec } from '../types.ts';
import type { KindResult } from './result.ts';
import { socketTimeout } from './tcp.ts';

/** The largest UDP payload over IPv4 (65535 - 8 byte UDP header - 20 byte IP header). */
const MAX_DATAGRAM = 65507;

/** A `udp` handler: the payload in one datagram; lookup plus send bounded by the timeout (60 s by default). */
export async function udpHandle(spec: HandlerSpec, payload: Buffer, ctx: ExecContext): Promise<KindResult> {
  const host = spec.socket?.host;
  const port = spec.socket?.port;
  if (!host || !port) return { ok: false, error: 'a udp handler needs socket.host and socket.port' };
  if (payload.length > MAX_DATAGRAM)
    return {
      ok: false,
      error: `udp ${host}:${port}: payload of ${payload.length} bytes is larger than one datagram (${MAX_DATAGRAM})`,
    };
  if (ctx.signal?.aborted)
    return { ok: false, error: `udp ${host}:${port}: cancelled, the node is stopping` };
  const seconds = socketTimeout(spec);
  let socket: dgram.Socket | undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<KindResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, error: `udp ${host}:${port}: timed out after ${seconds} s` }),
      seconds * 1000,
    );
  });
  const send = async (): Promise<KindResult> => {
    const addr = await lookup(host);
    const s = dgram.createSocket(addr.family === 6 ? 'udp6' : 'udp4');
    socket = s;
    return new Promise((resolve) => {
      s.on('error', (e) => resolve({ ok: false, error: `udp ${host}:${port}: ${e.message}` }));
      s.send(payload, port, addr.address, (e) =>
        resolve(e ? { ok: false, error: `udp ${host}:${port}: ${e.message}` } : { ok: true }),
      );
    });
  };
  const sent = send().catch((e: Error) => ({ ok: false, error: `udp ${host}:${port}: ${e.message}` }));
  try {
    return await Promise.race([sent, deadline]);
  } finally {
    clearTimeout(timer);
    try {
      socket?.close();
    } catch {
      /* already closed */
    }
    // A lookup that outlives the deadline still creates its socket: close it when it arrives.
    void sent.then(() => {
      try {
        socket?.close();
      } catch {
        /* already closed */
      }
    });
  }
}
