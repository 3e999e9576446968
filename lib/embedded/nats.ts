// The embedded single-node nats-server with JetStream that `monitor-backend start` runs when no
// --nats-url is given.
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { resolveBinary } from './binaries.ts';
import { checkPortsFree, parseHostPort } from './ports.ts';
import { connectableHost, serviceOf, type EmbeddedService } from './service.ts';
import { Supervisor } from './supervisor.ts';

interface EmbeddedNatsOptions {
  stateDir: string;
  node: string;
  /** host:port to listen on, e.g. 127.0.0.1:4222 or [::]:4222 */
  listen: string;
  log: Logger;
}

const DEFAULTS = {
  readyTimeoutMs: 15_000,
  greetTimeoutMs: 1_000,
  /** A first line longer than this is no NATS greeting. */
  maxGreetingBytes: 64 * 1024,
  // Above the 1 MB default: entity and event state can be large; 8 MB is the server's own ceiling
  // before it warns.
  maxPayload: '8MB',
} as const;

const q = (s: string) => JSON.stringify(s);

// A config file rather than flags: `max_payload` and the JetStream store dir have no flag of their
// own in every version. No `http` monitor port, since it would need a second free port.
function natsConfig(o: { node: string; listen: string; storeDir: string }): string {
  return [
    `server_name: ${q(o.node)}`,
    `listen: ${q(o.listen)}`,
    `max_payload: ${DEFAULTS.maxPayload}`,
    'jetstream {',
    `  store_dir: ${q(o.storeDir)}`,
    '}',
    '',
  ].join('\n');
}

/** True once the server greets a new connection with INFO, and says JetStream is on when it says at all. */
export function natsGreets(
  host: string,
  port: number,
  timeoutMs: number = DEFAULTS.greetTimeoutMs,
): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    let buf = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl < 0) {
        if (buf.length > DEFAULTS.maxGreetingBytes) done(false);
        return;
      }
      const line = buf.slice(0, nl).trim();
      if (!line.startsWith('INFO ')) return done(false);
      try {
        const info = JSON.parse(line.slice(5)) as { jetstream?: unknown };
        done(info.jetstream === undefined || info.jetstream === true);
      } catch {
        done(true);
      }
    });
  });
}

export async function startEmbeddedNats(o: EmbeddedNatsOptions): Promise<EmbeddedService> {
  const bin = resolveBinary('nats-server');
  if (bin === undefined)
    throw new Error(
      'nats-server not found; install the nats-server package (make setup does) or pass --nats-url',
    );
  const { host, port } = parseHostPort(o.listen);
  await checkPortsFree([{ host, port, flag: 'nats-listen' }]);
  const dir = join(o.stateDir, 'nats');
  // nats-server keeps its streams in a `jetstream/` folder below store_dir.
  const storeDir = dir;
  const confPath = join(dir, 'nats.conf');
  mkdirSync(storeDir, { recursive: true });
  writeFileSync(confPath, natsConfig({ node: o.node, listen: o.listen, storeDir }));
  const connectHost = connectableHost(host);
  const endpoint = `nats://${connectHost.includes(':') ? `[${connectHost}]` : connectHost}:${port}`;
  const supervisor = new Supervisor({
    name: 'nats-server',
    command: bin,
    args: ['-c', confPath],
    cwd: dir,
    pidFile: join(o.stateDir, 'nats-server.pid'),
    ready: () => natsGreets(connectHost, port),
    readyTimeoutMs: DEFAULTS.readyTimeoutMs,
    log: o.log,
    matchCmdline: ['nats-server', `-c ${confPath}`],
  });
  await supervisor.start();
  o.log.info('embedded nats-server is ready', { endpoint, storeDir, pid: supervisor.pid });
  return serviceOf('nats-server', [endpoint], supervisor);
}
