// Checks that the ports an embedded service will listen on are free *before* it is spawned: a child
// that fails to bind only says so deep in its own log, while this gives the operator one line naming
// the flag to change.
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  readonly host: string;
  readonly port: number;
  readonly flag: string;
  constructor(host: string, port: number, flag: string) {
    super(`port ${port} on ${host} is already in use; change --${flag.replace(/^--/, '')}`);
    this.name = 'PortInUseError';
    this.host = host;
    this.port = port;
    this.flag = flag;
  }
}

/** `[::1]` -> `::1`; URLs and host:port strings keep IPv6 hosts in brackets, net.listen wants them bare. */
function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'nats:': 4222 };

/** Host (without brackets) and port of a URL such as `http://127.0.0.1:2379`. */
export function hostPortOfUrl(url: string): { host: string; port: number } {
  const u = new URL(url);
  const port = u.port !== '' ? Number(u.port) : DEFAULT_PORTS[u.protocol];
  if (port === undefined) throw new Error(`URL ${url} has no port`);
  return { host: stripBrackets(u.hostname), port };
}

/** Host (without brackets) and port of `127.0.0.1:4222` or `[::]:4222`. */
export function parseHostPort(hostPort: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]*):(\d{1,5})$/.exec(hostPort.trim());
  if (!m) throw new Error(`${hostPort} is not host:port`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`${hostPort} has a port above 65535`);
  return { host: stripBrackets(m[1] ?? ''), port };
}

function probe(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    // exclusive: in a cluster worker the primary would otherwise share the handle and never fail.
    server.listen({ host: host === '' ? undefined : host, port, exclusive: true }, () => {
      server.close(() => resolve(undefined));
    });
  });
}

/** Throws PortInUseError for the first entry whose port is taken. Port 0 means "any" and is skipped. */
export async function checkPortsFree(
  list: Array<{ host: string; port: number; flag: string }>,
): Promise<void> {
  for (const { host, port, flag } of list) {
    if (port === 0) continue;
    const bare = stripBrackets(host);
    const err = await probe(bare, port);
    if (err === undefined) continue;
    if (err.code === 'EADDRINUSE') throw new PortInUseError(bare, port, flag);
    // Other failures (EACCES below 1024, EADDRNOTAVAIL for a foreign address) are just as fatal for the
    // child, so they get the same one-line shape naming the flag.
    throw new Error(
      `cannot listen on port ${port} on ${bare} (${err.code ?? err.message}); change --${flag.replace(/^--/, '')}`,
    );
  }
}
