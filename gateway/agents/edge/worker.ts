/**
 * The agent edge thread (docs/architecture.md#the-agent-edge-thread): the agent port's listener,
 * TLS, HTTP parsing and WebSocket framing, on a loop of its own. Node accepts one connection per
 * turn of a loop; the main thread's turns grow long under load, and agents reconnecting together
 * used to wait seconds in the accept queue. Here the turns stay short, and the main thread hears of
 * every waiting agent at once. Nothing here decides who may connect: the main thread answers each
 * upgrade request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  CONTENT_JSON,
  CONTENT_PROTOBUF,
  MAX_FRAME_BYTES,
  contentTypeForAccept,
  messageBytes,
} from '../../../proto/frames.ts';
import { errorBody } from '../../../proto/errors.ts';
import { trustFailure } from '../../../lib/tls.ts';
import { certificateVerdict } from './cert.ts';
import { refuse } from './refuse.ts';
import { Batcher, ownBytes, type EdgeCommand, type EdgeEvent, type EdgeOptions } from './protocol.ts';

const DEFAULTS = {
  /** A socket's queued bytes are reported to the main thread when they move by this much. */
  bufferedStepBytes: 1024 * 1024,
  closePollMs: 50,
} as const;

interface Pending {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  accepted: boolean;
}

interface Open {
  ws: WebSocket;
  /** The queued bytes last reported. */
  reported: number;
}

class Edge {
  private readonly out: Batcher<EdgeEvent>;
  private readonly pending = new Map<number, Pending>();
  private readonly open = new Map<number, Open>();
  private server: Server | HttpsServer | undefined;
  private nextId = 1;
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
    // The session checks text frames itself, so the 1007 close names its reason (ws closes with none).
    skipUTF8Validation: true,
  });

  constructor(
    private readonly opts: EdgeOptions,
    port: MessagePort,
  ) {
    this.out = new Batcher((batch, transfer) => port.postMessage(batch, transfer));
    port.on('message', (batch: EdgeCommand[]) => {
      for (const cmd of batch) this.command(cmd);
    });
    // What ws itself refuses after the main thread's checks (a bad Sec-WebSocket-Key, -Version or
    // -Protocol, a method other than GET) it would answer with a text body: JSON here, as every
    // refusal is (docs/compatibility.md#error-format), with ws's status and version header.
    this.wss.on('wsClientError', (err, socket, req) => {
      const version = Number(req.headers['sec-websocket-version']);
      refuse(
        socket,
        req.method === 'GET' ? 400 : 405,
        err.message,
        version === 13 || version === 8 ? {} : { 'Sec-WebSocket-Version': '13, 8' },
      );
    });
    // Both encodings are offered; the payloads use protobuf only when the agent asked for exactly it.
    this.wss.on('headers', (headers, req) => {
      headers.push(
        `Backend-ID: ${opts.node}`,
        `Accept: ${CONTENT_PROTOBUF}`,
        `Accept: ${CONTENT_JSON}`,
        `Content-Type: ${contentTypeForAccept(req.headers.accept)}`,
      );
    });
  }

  listen(): void {
    const server = this.listener();
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.upgrade(req, socket, head),
    );
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => unreadable(err, socket));
    server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
      this.log('info', 'agent TLS handshake failed', {
        reason: trustFailure(err) ?? err.message,
        remote: socket.remoteAddress,
      });
    });
    server.once('error', (err: NodeJS.ErrnoException) =>
      this.emit({ t: 'listen-failed', message: err.message, ...(err.code ? { code: err.code } : {}) }),
    );
    server.listen(this.opts.port, this.opts.host.replace(/^\[|\]$/g, ''), () => {
      this.server = server;
      this.emit({ t: 'listening' });
    });
  }

  // Client certificates are verified by hand after the handshake (cert.ts) so a bad one gets an HTTP
  // reason; hence rejectUnauthorized false here.
  private listener(): Server | HttpsServer {
    const handler = (_req: IncomingMessage, res: ServerResponse) => {
      const body = JSON.stringify(
        errorBody('invalid_argument', 'this port only accepts agent WebSocket connections on /'),
      );
      res.writeHead(426, { 'Content-Type': 'application/json', Upgrade: 'websocket' }).end(body);
    };
    const tls = this.opts.tls;
    if (!tls) return createServer(handler);
    return createHttpsServer(
      { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: !!tls.ca, rejectUnauthorized: false },
      handler,
    );
  }

  private emit(ev: EdgeEvent, bytes?: Uint8Array): void {
    this.out.push(ev, bytes);
  }

  private log(level: 'info' | 'warn', msg: string, fields: Record<string, unknown>): void {
    this.emit({ t: 'log', level, msg, fields });
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/') {
      refuse(socket, 404, `no agent endpoint at ${path}`);
      return;
    }
    const id = this.nextId++;
    const tls = this.opts.tls;
    this.pending.set(id, { req, socket, head, accepted: false });
    socket.once('close', () => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (p.accepted) this.emit({ t: 'gone', id });
    });
    this.emit({
      t: 'hello',
      id,
      headers: req.headers,
      remote: req.socket.remoteAddress,
      ...(tls ? { cert: certificateVerdict(req.socket as TLSSocket, tls.requireClientCert) } : {}),
    });
  }

  private command(cmd: EdgeCommand): void {
    switch (cmd.t) {
      case 'accept':
        return this.accept(cmd.id);
      case 'refuse': {
        const p = this.pending.get(cmd.id);
        if (!p) return;
        this.pending.delete(cmd.id);
        refuse(p.socket, cmd.status, cmd.message, cmd.headers);
        return;
      }
      case 'drain':
        void this.drain();
        return;
    }
    const ws = this.open.get(cmd.id)?.ws;
    if (!ws) return;
    switch (cmd.t) {
      case 'send':
        if (ws.readyState !== ws.OPEN) return;
        ws.send(cmd.data);
        this.reportBuffered(cmd.id);
        return;
      case 'close':
        return ws.close(cmd.code, cmd.reason);
      case 'terminate':
        return ws.terminate();
      case 'ping':
        if (ws.readyState === ws.OPEN) ws.ping();
        return;
      case 'pause':
        return ws.pause();
      case 'resume':
        return ws.resume();
    }
  }

  private accept(id: number): void {
    const p = this.pending.get(id);
    if (!p) {
      // Gone between the request and the answer; the main thread has nothing to undo.
      this.emit({ t: 'gone', id });
      return;
    }
    p.accepted = true;
    if (p.socket.destroyed) return;
    this.wss.handleUpgrade(p.req, p.socket, p.head, (ws) => {
      this.pending.delete(id);
      const entry: Open = { ws, reported: 0 };
      this.open.set(id, entry);
      ws.on('message', (data, isBinary) => {
        const bytes = ownBytes(messageBytes(data as Buffer));
        this.emit({ t: 'message', id, data: bytes, binary: isBinary }, bytes);
      });
      ws.on('pong', () => this.emit({ t: 'pong', id }));
      ws.on('error', (err) => this.emit({ t: 'error', id, message: err.message }));
      ws.on('close', (code, reason) => {
        this.open.delete(id);
        this.emit({ t: 'close', id, code, reason: reason.toString() });
      });
      // The socket itself: ws's queue empties into it, and it says when it has written everything.
      (ws as unknown as { _socket: Duplex })._socket.on('drain', () => this.reportBuffered(id));
      this.emit({ t: 'open', id });
    });
  }

  private reportBuffered(id: number): void {
    const entry = this.open.get(id);
    if (!entry) return;
    const bytes = entry.ws.bufferedAmount;
    if (Math.abs(bytes - entry.reported) < DEFAULTS.bufferedStepBytes && !(bytes === 0 && entry.reported > 0))
      return;
    entry.reported = bytes;
    this.emit({ t: 'buffered', id, bytes });
  }

  /**
   * The port takes no new connection, every agent is told 1001 "going away", and those that have
   * not closed after the grace period are cut (docs/architecture.md#stopping-a-node).
   */
  private async drain(): Promise<void> {
    const closed = new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
    for (const ws of this.wss.clients) ws.close(1001, 'backend shutting down');
    const deadline = Date.now() + this.opts.closeGraceMs;
    while (this.wss.clients.size > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, DEFAULTS.closePollMs));
    for (const ws of this.wss.clients) ws.terminate();
    for (const p of this.pending.values()) p.socket.destroy();
    this.server?.closeAllConnections();
    await closed;
    this.emit({ t: 'drained' });
    this.out.flush();
  }
}

/**
 * A request the HTTP parser cannot read (a byte no header may hold, headers over its 16 KiB) is
 * answered as Node's default would answer it, but in JSON as every refusal here is: 431 for too
 * large headers, 408 for a request too slow to come, 400 otherwise. Unless the peer is gone, or an
 * answer to an earlier request on the connection has begun (Node's own rule: a second one would
 * corrupt it).
 */
function unreadable(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') refuse(socket, 431, 'the request headers are too large');
  else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') refuse(socket, 408, 'the request took too long');
  else refuse(socket, 400, `malformed HTTP request: ${err.message}`);
}

if (parentPort) new Edge(workerData as EdgeOptions, parentPort).listen();
