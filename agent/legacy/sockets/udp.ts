import { isUtf8 } from 'node:buffer';
import { createSocket } from 'node:dgram';
import { bindUdp, closeUdp, type Listener, udpType } from '../../listen.ts';
import { acceptResults } from './results.ts';
import type { LegacyInputDeps } from './settings.ts';

// The legacy client's UDP socket (reference 2.1): each datagram is a message of its own and nothing is
// ever sent back, so what goes wrong is only in the log: bad JSON at error, as the legacy client did.

type UdpDeps = Pick<LegacyInputDeps, 'sink' | 'log'>;

export async function startLegacyUdp(host: string, port: number, deps: UdpDeps): Promise<Listener> {
  const socket = createSocket(udpType(host));
  socket.on('message', (msg) => {
    const text = msg.toString('utf8');
    if (text.trim() === 'ping') return;
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      deps.log.error('check result is not valid JSON', { transport: 'udp', error: (err as Error).message });
      return;
    }
    if (!isUtf8(msg)) deps.log.warn('check result is not valid UTF-8', { transport: 'udp' });
    // acceptResults logs what it refuses; there is nobody to tell.
    void acceptResults(doc, deps, 'udp');
  });
  await bindUdp('legacy UDP socket', socket, host, port);
  socket.on('error', (err) => deps.log.warn('legacy UDP socket error', { error: err.message }));
  return {
    close: () => closeUdp(socket),
  };
}
