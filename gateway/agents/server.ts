import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { CONTENT_JSON, CONTENT_PROTOBUF, MAX_FRAME_BYTES } from '../../proto/frames.ts';
import { codecForAccept } from '../../proto/wire/codec.ts';
import { errorBody, kindOfStatus } from '../../proto/errors.ts';
import type { ConfigStore } from '../../actors/config/store.ts';
import { VerifiedCache } from '../auth/passwords.ts';
import type { Authorizer } from '../auth/rbac.ts';
import type { LoginLimits } from '../auth/login-limits.ts';
import { authenticateAgent, HandshakeError } from './handshake.ts';
import { AgentSession, type SessionDeps } from './session.ts';
import { ENTITY_LIMIT_MESSAGE } from '../../actors/entity/limit.ts';
import { certificateUser, type AgentServerTls } from './tls.ts';
import { trustFailure } from '../../lib/tls.ts';

interface AgentGatewayOptions extends SessionDeps {
  host: string;
  port: number;
  node: string;
  config: ConfigStore;
  authz: Authorizer;
  /** Failed handshake logins per user name and address (shared with the API's logins). */
  limits: LoginLimits;
  /** Seconds between WebSocket pings to each agent; a missed pong closes the session. */
  heartbeatSeconds?: number;
  /** wss instead of ws; see gateway/agents/tls.ts. */
  tls?: AgentServerTls;
}

const DEFAULTS = {
  heartbeatSeconds: 30,
  /** The heartbeat looks at a slice of the sessions this often (every period when that is shorter). */
  heartbeatTickMs: 1000,
  /** At stop, agents get this long to close their sessions before they are cut. */
  closeGraceMs: 2000,
  closePollMs: 50,
} as const;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function refuse(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(errorBody(kindOfStatus(status), message));
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * The agent port: WebSocket upgrades on `/`, authenticated before the upgrade so a refused agent
 * gets a plain HTTP status (401, 403, 404) it can log.
 */
export class AgentGateway {
  private server: Server | HttpsServer | undefined;
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
    // The session checks text frames itself, so the 1007 close names its reason (ws closes with none).
    skipUTF8Validation: true,
  });
  private readonly sessions = new Set<AgentSession>();
  private readonly passwords = new VerifiedCache();
  private heartbeat: NodeJS.Timeout | undefined;
  private draining = false;
  private drained: Promise<void> | undefined;

  constructor(private readonly opts: AgentGatewayOptions) {
    // What ws itself refuses after our checks (a bad Sec-WebSocket-Key, -Version or -Protocol, a method
    // other than GET) it would answer with a text body: JSON here, as every refusal is
    // (docs/compatibility.md#error-format). Its status and version header, as ws would send them.
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
        `Content-Type: ${codecForAccept(req.headers.accept).contentType}`,
      );
    });
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async start(): Promise<void> {
    const server = this.listener((req, res) => {
      const body = JSON.stringify(
        errorBody('invalid_argument', 'this port only accepts agent WebSocket connections on /'),
      );
      res.writeHead(426, { 'Content-Type': 'application/json', Upgrade: 'websocket' }).end(body);
    });
    server.on('upgrade', (req, socket, head) => void this.upgrade(req, socket, head));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.unreadable(err, socket));
    server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
      this.opts.log.info('agent TLS handshake failed', {
        reason: trustFailure(err) ?? err.message,
        remote: socket.remoteAddress,
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host.replace(/^\[|\]$/g, ''), () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    // Each second looks at a slice of the sessions, so a full round takes one heartbeat period and
    // no tick writes to thousands of sockets at once.
    const periodMs = (this.opts.heartbeatSeconds ?? DEFAULTS.heartbeatSeconds) * 1000;
    const ticks = Math.max(1, Math.round(periodMs / DEFAULTS.heartbeatTickMs));
    let cursor = this.sessions.values();
    this.heartbeat = setInterval(
      () => {
        const now = Date.now();
        for (let n = Math.ceil(this.sessions.size / ticks); n > 0; n--) {
          let next = cursor.next();
          if (next.done) {
            cursor = this.sessions.values();
            next = cursor.next();
            if (next.done) break;
          }
          next.value.heartbeat(now, periodMs);
        }
      },
      Math.min(DEFAULTS.heartbeatTickMs, periodMs),
    );
    this.heartbeat.unref();
  }

  /**
   * A request the HTTP parser cannot read (a byte no header may hold, headers over its 16 KiB) is
   * answered as Node's default would answer it, but in JSON as every refusal here is: 431 for too
   * large headers, 408 for a request too slow to come, 400 otherwise. Unless the peer is gone, or
   * an answer to an earlier request on the connection has begun (Node's own rule: a second one
   * would corrupt it).
   */
  private unreadable(err: NodeJS.ErrnoException, socket: Duplex): void {
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') refuse(socket, 431, 'the request headers are too large');
    else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') refuse(socket, 408, 'the request took too long');
    else refuse(socket, 400, `malformed HTTP request: ${err.message}`);
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const began = performance.now();
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/') {
      refuse(socket, 404, `no agent endpoint at ${path}`);
      return;
    }
    let identity;
    try {
      const tls = this.opts.tls;
      const certUser = tls ? certificateUser(req.socket as TLSSocket, tls.requireClientCert) : undefined;
      identity = await authenticateAgent(
        req,
        this.opts.config,
        this.passwords,
        this.opts.authz,
        this.opts.limits,
        certUser,
      );
    } catch (err) {
      const status = err instanceof HandshakeError ? err.status : 500;
      if (status === 500) this.opts.log.error('agent handshake failed', { error: (err as Error).message });
      else
        this.opts.log.info('agent handshake refused', {
          status,
          reason: (err as Error).message,
          remote: req.socket.remoteAddress,
        });
      const retryAfterSec = (err as Partial<HandshakeError>).retryAfterSec;
      refuse(
        socket,
        status,
        (err as Error).message,
        retryAfterSec !== undefined ? { 'Retry-After': String(retryAfterSec) } : {},
      );
      return;
    }
    if (this.opts.entityLimit?.refuses(identity.namespace, identity.agentName)) {
      this.opts.log.warn('agent refused: entity limit reached', {
        namespace: identity.namespace,
        agent: identity.agentName,
        limit: this.opts.entityLimit.limit,
      });
      refuse(socket, 402, ENTITY_LIMIT_MESSAGE);
      return;
    }
    if (socket.destroyed) return;
    // Authenticated while the node began to stop: this node would close it with 1001 at once.
    if (this.draining) {
      refuse(socket, 503, 'this backend is stopping; connect to another one');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const codec = codecForAccept(req.headers.accept);
      const session = new AgentSession(ws, identity, this.opts, codec, !!this.opts.tls);
      this.sessions.add(session);
      ws.on('close', () => this.sessions.delete(session));
      this.opts.log.info('agent connected', {
        namespace: identity.namespace,
        agent: identity.agentName,
        remote: req.socket.remoteAddress,
        encoding: codec.contentType,
        // From the upgrade request to the open socket: credentials, permission, the upgrade itself.
        handshake_ms: Math.round(performance.now() - began),
      });
    });
  }

  // Client certificates are verified by hand after the handshake (tls.ts) so a bad one gets an HTTP
  // reason; hence rejectUnauthorized false here.
  private listener(handler: RequestListener): Server | HttpsServer {
    const tls = this.opts.tls;
    if (!tls) return createServer(handler);
    return createHttpsServer(
      { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: !!tls.ca, rejectUnauthorized: false },
      handler,
    );
  }

  /**
   * The first steps of a graceful stop (docs/architecture.md#stopping-a-node): the port takes no new
   * connection (refused, so a balancer's redispatch or the agent's next URL takes it elsewhere), a
   * handshake under way is refused with 503, and every agent is told 1001 "going away" so it
   * reconnects to another node at once. Those that do not close in time are cut.
   */
  drain(): Promise<void> {
    return (this.drained ??= this.closeAll());
  }

  private async closeAll(): Promise<void> {
    this.draining = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    const closed = new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
    for (const ws of this.wss.clients) ws.close(1001, 'backend shutting down');
    const deadline = Date.now() + DEFAULTS.closeGraceMs;
    while (this.wss.clients.size > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, DEFAULTS.closePollMs));
    for (const ws of this.wss.clients) ws.terminate();
    this.server?.closeAllConnections();
    await closed;
  }

  async stop(): Promise<void> {
    await this.drain();
  }
}
