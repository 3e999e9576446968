import { createSocket } from 'node:dgram';
import type { Logger } from '../../lib/log.ts';
import type { EventSink } from '../events/prepare.ts';
import { bindUdp, closeUdp, type Listener, udpType } from '../listen.ts';
import { parsePayload } from './payload.ts';

// The legacy UDP socket: one datagram is one check result, no answer. Sensu documents 1500 bytes;
// any datagram the network delivers (up to 64 KB on loopback) is accepted here.

interface UdpDeps {
  sink: EventSink;
  log: Logger;
}

export async function startUdpSocket(
  host: string,
  port: number,
  deps: UdpDeps,
): Promise<Listener & { dropped: () => number }> {
  const socket = createSocket(udpType(host));
  let dropped = 0;
  socket.on('message', (msg) => {
    const p = parsePayload(msg);
    if (p.kind !== 'event') {
      dropped++;
      deps.log.debug('invalid socket input', {
        transport: 'udp',
        reason: p.kind === 'invalid' ? p.reason : p.kind === 'ping' ? 'ping over UDP' : 'malformed JSON',
      });
      return;
    }
    deps.sink
      .submit(p.event)
      .catch((err: Error) =>
        deps.log.warn('socket event not queued', { transport: 'udp', error: err.message }),
      );
  });
  await bindUdp('UDP socket', socket, host, port);
  socket.on('error', (err) => deps.log.warn('UDP socket error', { error: err.message }));
  return {
    dropped: () => dropped,
    close: () => closeUdp(socket),
  };
}
