/**
 * Free TCP ports for test servers (etcd, nats-server, backends).
 *
 * Ports are probed by binding 127.0.0.1:<port> and closing again; the caller
 * then hands the number to a child process, which binds it a little later.
 *
 * Why not just `listen(0)`: the kernel picks those from the ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range, usually 32768-60999), which is the
 * same range it uses for the local side of *outgoing* connections. Between our
 * probe and the child's bind, any outgoing connection (etcd client, NATS
 * client, fetch) may grab that very port, and the child then dies with
 * EADDRINUSE. So we first try random ports *below* the ephemeral range (and
 * above 20000, away from well-known service ports such as 2379/4222/8080), and
 * fall back to `listen(0)` only if that keeps failing.
 *
 * Every port handed out is remembered for the life of this process and never
 * handed out twice (e.g. a stopped backend's port is not recycled for another
 * server while a restart test still means to reuse it).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

const handedOut = new Set<number>();

const RANGE_LOW = 20000;

function ephemeralLow(): number {
  try {
    const [lo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(lo);
    if (Number.isInteger(n) && n > 0) return n;
  } catch {
    /* not Linux: use the usual default */
  }
  return 32768;
}

const RANGE_HIGH = Math.min(ephemeralLow(), 65536) - 1; // inclusive

/** Binds host:port, closes again; resolves to the bound port or null if it is taken. */
function probe(port: number, host = '127.0.0.1'): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(null));
    srv.listen({ port, host, exclusive: true }, () => {
      const addr = srv.address();
      const bound = addr && typeof addr === 'object' ? addr.port : null;
      srv.close(() => resolve(bound));
    });
  });
}

/** Returns a TCP port on 127.0.0.1 that is free right now and was never returned before in this process. */
export async function freePort(): Promise<number> {
  if (RANGE_HIGH > RANGE_LOW + 100) {
    for (let attempt = 0; attempt < 200; attempt++) {
      const port = RANGE_LOW + Math.floor(Math.random() * (RANGE_HIGH - RANGE_LOW + 1));
      if (handedOut.has(port)) continue;
      handedOut.add(port); // reserve before the await so concurrent callers never race to the same port
      if ((await probe(port)) === port) return port;
      handedOut.delete(port);
    }
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await probe(0);
    if (port !== null && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('freePort: could not find a free port');
}

/** Several distinct free ports. */
export async function freePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await freePort());
  return out;
}
