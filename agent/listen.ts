import type { Socket as UdpSocket } from 'node:dgram';
import { isIPv6, type Server } from 'node:net';

// Binding of the agent's local listeners (HTTP API, sockets, StatsD): one error type so the entry
// point can tell "port in use" from a bug and exit with a clear line.

export interface Listener {
  close(): Promise<void>;
}

export class ListenError extends Error {
  constructor(
    readonly what: string,
    readonly host: string,
    readonly port: number,
    cause: Error,
  ) {
    super(
      `${what}: cannot listen on ${host}:${port}: ${(cause as NodeJS.ErrnoException).code ?? cause.message}`,
    );
    this.name = 'ListenError';
  }
}

const bare = (host: string) => host.replace(/^\[|\]$/g, '');

/** server.listen as a promise; a bind failure becomes a ListenError. */
export function listen(what: string, server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(new ListenError(what, host, port, err));
    server.once('error', onError);
    server.listen(port, bare(host), () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** socket.bind as a promise; a bind failure becomes a ListenError. */
export function bindUdp(what: string, socket: UdpSocket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(new ListenError(what, host, port, err));
    socket.once('error', onError);
    socket.bind(port, bare(host), () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

/** The UDP socket family for a bind address (`[::1]` and `::` are IPv6). */
export const udpType = (host: string): 'udp4' | 'udp6' => (isIPv6(bare(host)) ? 'udp6' : 'udp4');

/** Closes a bound UDP socket; resolves also when it was closed already. */
export function closeUdp(socket: UdpSocket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  });
}
