import { createServer, type Socket } from 'node:net';
import type { Logger } from '../../lib/log.ts';
import type { EventSink } from '../events/prepare.ts';
import { listen, type Listener } from '../listen.ts';
import { parsePayload } from './payload.ts';

// The legacy TCP socket: one check result per connection. Bytes are gathered until they parse as
// JSON; the answer is `ok`, `invalid` (bad JSON, bad event, timeout, too big) or `error` (the
// agent could not queue it), then the connection is closed. `ping` gets `pong`.

/** Time a client has to send a complete result (Sensu's read deadline). */
const TCP_READ_DEADLINE_MS = 5_000;
/** Largest result accepted; the same bound as the HTTP API's body. */
const TCP_MAX_BYTES = 512 * 1024;

interface SocketDeps {
  sink: EventSink;
  log: Logger;
}

/** Answers and closes both directions: a client that keeps its side open must not hold the socket. */
function reply(conn: Socket, answer: string): void {
  if (conn.destroyed) return;
  conn.end(answer, () => conn.destroy());
}

function handle(conn: Socket, deps: SocketDeps, open: Set<Socket>): void {
  open.add(conn);
  const parts: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = (answer: string) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    conn.removeAllListeners('data');
    reply(conn, answer);
  };
  const refuse = (reason: string) => {
    deps.log.debug('invalid socket input', { transport: 'tcp', reason });
    finish('invalid');
  };
  const timer = setTimeout(() => refuse('no complete JSON before the read deadline'), TCP_READ_DEADLINE_MS);
  const attempt = (final: boolean) => {
    const p = parsePayload(Buffer.concat(parts));
    switch (p.kind) {
      case 'ping':
        finish('pong');
        return;
      case 'incomplete':
        if (final) refuse('malformed JSON');
        return;
      case 'invalid':
        refuse(p.reason);
        return;
      case 'event':
        done = true; // no more reading; the answer waits for the queue
        clearTimeout(timer);
        conn.removeAllListeners('data');
        deps.sink.submit(p.event).then(
          () => reply(conn, 'ok'),
          (err: Error) => {
            deps.log.warn('socket event not queued', { transport: 'tcp', error: err.message });
            reply(conn, 'error');
          },
        );
    }
  };
  conn.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > TCP_MAX_BYTES) {
      refuse(`more than ${TCP_MAX_BYTES} bytes`);
      return;
    }
    parts.push(chunk);
    // No JSON text starts with "p", so a trimmed `ping` can be answered as soon as it is complete.
    attempt(false);
  });
  conn.on('end', () => {
    if (!done) attempt(true);
  });
  conn.on('error', () => {
    clearTimeout(timer);
    done = true;
  });
  conn.on('close', () => {
    clearTimeout(timer);
    open.delete(conn);
  });
}

export async function startTcpSocket(host: string, port: number, deps: SocketDeps): Promise<Listener> {
  const open = new Set<Socket>();
  // Half-open: `echo '{...}' | nc host port` closes its side first and still reads our answer.
  const server = createServer({ allowHalfOpen: true }, (conn) => handle(conn, deps, open));
  await listen('TCP socket', server, host, port);
  // After binding, errors are per-connection trouble (EMFILE on accept): log, keep serving.
  server.on('error', (err) => deps.log.warn('TCP socket error', { error: err.message }));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of open) c.destroy();
      }),
  };
}
