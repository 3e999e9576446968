import type { AgentConfig } from '../proto/schemas/agent-config.ts';
import type { Logger } from '../lib/log.ts';
import { VERSION } from '../proto/version.ts';
import { startApi } from './api/server.ts';
import type { EventSink } from './events/prepare.ts';
import type { Listener } from './listen.ts';
import { startTcpSocket } from './sockets/tcp.ts';
import { startUdpSocket } from './sockets/udp.ts';
import { startStatsd } from './statsd/server.ts';

// Starts the agent's local inputs that are enabled: HTTP API, TCP/UDP sockets, StatsD. A listener
// that cannot bind rejects with a ListenError after the others started are closed again.

interface LocalInputDeps {
  config: AgentConfig;
  sink: EventSink;
  connected: () => boolean;
  log: Logger;
}

export async function startLocalInputs(deps: LocalInputDeps): Promise<Listener[]> {
  const { config, log, sink } = deps;
  const started: Listener[] = [];
  try {
    if (!config['disable-api']) {
      started.push(
        await startApi(config['api-host'], config['api-port'], {
          sink,
          connected: deps.connected,
          version: VERSION,
          log: log.child({ input: 'api' }),
        }),
      );
    }
    if (!config['disable-sockets']) {
      const socketDeps = { sink, log: log.child({ input: 'socket' }) };
      started.push(await startTcpSocket(config['socket-host'], config['socket-port'], socketDeps));
      started.push(await startUdpSocket(config['socket-host'], config['socket-port'], socketDeps));
      log.info('check result sockets listening (TCP and UDP)', {
        host: config['socket-host'],
        port: config['socket-port'],
      });
    }
    if (!config['statsd-disable']) {
      started.push(
        await startStatsd({
          host: config['statsd-metrics-host'],
          port: config['statsd-metrics-port'],
          flushIntervalSec: config['statsd-flush-interval'],
          handlers: config['statsd-event-handlers'],
          sink,
          log: log.child({ input: 'statsd' }),
        }),
      );
    }
  } catch (err) {
    await closeAll(started);
    throw err;
  }
  return started;
}

export async function closeAll(listeners: Listener[]): Promise<void> {
  await Promise.all(listeners.map((l) => l.close().catch(() => {})));
}
