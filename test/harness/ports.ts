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
 * When test/run.ts runs suites side by side it gives each one a slice of that
 * range in MONITOR_TEST_PORT_RANGE (`lo-hi`): two suites, separate processes
 * that cannot see each other's handed-out ports, never probe the same port.
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

/** The whole range the test servers' ports come from, both ends inclusive. */
export function testPortRange(): [number, number] {
  return [RANGE_LOW, Math.min(ephemeralLow(), 65536) - 1];
}

/** This process's part of it: MONITOR_TEST_PORT_RANGE when the runner set one inside the range. */
function ownRange(): [number, number] {
  const [lo, hi] = testPortRange();
  const m = /^(\d+)-(\d+)$/.exec(process.env.MONITOR_TEST_PORT_RANGE ?? '');
  if (!m) return [lo, hi];
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a >= lo && b <= hi && b > a + 100 ? [a, b] : [lo, hi];
}

const [FROM, TO] = ownRange();

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
  if (TO > FROM + 100) {
    for (let attempt = 0; attempt < 200; attempt++) {
      const port = FROM + Math.floor(Math.random() * (TO - FROM + 1));
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
