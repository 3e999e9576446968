import type { Listener } from '../../listen.ts';
import { startLegacyHttp } from './http.ts';
import type { LegacyInputDeps } from './settings.ts';
import { startLegacyTcp } from './tcp.ts';
import { startLegacyUdp } from './udp.ts';

// The legacy client's inputs, in place of the agent's own API and sockets: the TCP and UDP socket on
// one port and the HTTP socket, each unless its block says `enabled: false`. Every result they take
// goes to the same outbox as any event (docs/compatibility.md#legacy-client).

/** Starts the enabled inputs; a port that cannot be bound rejects with a ListenError, the others closed again. */
export async function startLegacyInputs(deps: LegacyInputDeps): Promise<Listener[]> {
  const { client } = deps.settings;
  const started: Listener[] = [];
  try {
    if (client.socket.enabled) {
      const { bind, port } = client.socket;
      const socketDeps = {
        sink: deps.sink,
        log: deps.log.child({ input: 'legacy-socket' }),
      };
      started.push(await startLegacyTcp(bind, port, socketDeps));
      started.push(await startLegacyUdp(bind, port, socketDeps));
      deps.log.info('legacy client socket listening (TCP and UDP)', { host: bind, port });
    }
    if (client.http_socket.enabled) {
      const { bind, port } = client.http_socket;
      started.push(
        await startLegacyHttp(bind, port, { ...deps, log: deps.log.child({ input: 'legacy-http-socket' }) }),
      );
      deps.log.info('legacy client HTTP socket listening', { host: bind, port });
    }
  } catch (err) {
    // Not listeners.ts's closeAll: the agent's listeners may come to import this module.
    await Promise.all(started.map((l) => l.close().catch(() => {})));
    throw err;
  }
  return started;
}
