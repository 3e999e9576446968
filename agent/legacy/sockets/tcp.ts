import { isUtf8 } from 'node:buffer';
import { createServer, type Socket } from 'node:net';
import { listen, type Listener } from '../../listen.ts';
import { acceptResults, readBuffer } from './results.ts';
import type { LegacyInputDeps } from './settings.ts';

// The legacy client's TCP socket (reference 2.1): one message per connection, the whole buffer read
// again on every chunk, `ping` answered `pong`, a result or an array of results answered `ok` or
// `invalid` without a newline, then the connection is closed once the answer is written.

/** Quiet time after a chunk before an incomplete message is refused (the legacy WATCHDOG_DELAY). */
export const WATCHDOG_MS = 500;
/** Largest message; the legacy socket had none, so a sender could grow its buffer without end. */
export const MAX_MESSAGE_BYTES = 512 * 1024;
/** A connection that sends nothing at all is closed after this long (it holds a descriptor). */
const IDLE_MS = 15_000;

type TcpDeps = Pick<LegacyInputDeps, 'sink' | 'log'>;

function handle(conn: Socket, deps: TcpDeps, open: Set<Socket>): void {
  open.add(conn);
  const parts: Buffer[] = [];
  let size = 0;
  let done = false;
  let watchdog: NodeJS.Timeout | undefined;
  const answer = (text: string) => {
    done = true;
    clearTimeout(watchdog);
    conn.setTimeout(0);
    conn.removeAllListeners('data');
    // Half-closed by the sender or not, the answer is written and then both sides are closed.
    if (!conn.destroyed) conn.end(text, () => conn.destroy());
  };
  const refuse = (why: string) => {
    deps.log.warn('invalid check result', { transport: 'tcp', reason: why });
    answer('invalid');
  };
  conn.setTimeout(IDLE_MS, () => {
    if (size === 0) conn.destroy();
  });
  conn.on('data', (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > MAX_MESSAGE_BYTES) {
      refuse(`message larger than ${MAX_MESSAGE_BYTES} bytes`);
      return;
    }
    parts.push(chunk);
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    const intake = readBuffer(buf.toString('utf8'));
    if (intake.kind === 'ping') {
      answer('pong');
      return;
    }
    if (intake.kind === 'incomplete') {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => refuse(`no complete JSON within ${WATCHDOG_MS} ms`), WATCHDOG_MS);
      return;
    }
    done = true;
    clearTimeout(watchdog);
    if (!isUtf8(buf)) deps.log.warn('check result is not valid UTF-8', { transport: 'tcp' });
    void acceptResults(intake.doc, deps, 'tcp').then((o) => answer(o.kind));
  });
  // The sender closed its side: nothing more is coming, so an incomplete message is refused now.
  conn.on('end', () => {
    if (done) return;
    if (size === 0) conn.destroy();
    else refuse('connection closed before a complete JSON message');
  });
  conn.on('error', () => {
    done = true;
    clearTimeout(watchdog);
  });
  conn.on('close', () => {
    clearTimeout(watchdog);
    open.delete(conn);
  });
}

export async function startLegacyTcp(host: string, port: number, deps: TcpDeps): Promise<Listener> {
  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (conn) => handle(conn, deps, open));
  await listen('legacy TCP socket', server, host, port);
  server.on('error', (err) => deps.log.warn('legacy TCP socket error', { error: err.message }));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of open) c.destroy();
      }),
  };
}
