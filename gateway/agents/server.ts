import { codecForAccept } from '../../proto/wire/codec.ts';
import type { ConfigStore } from '../../actors/config/store.ts';
import { VerifiedCache } from '../auth/passwords.ts';
import type { Authorizer } from '../auth/rbac.ts';
import type { LoginLimits } from '../auth/login-limits.ts';
import { authenticateAgent, HandshakeError, type AgentIdentity } from './handshake.ts';
import { AgentSession, type SessionDeps } from './session.ts';
import { ENTITY_LIMIT_MESSAGE } from '../../actors/entity/limit.ts';
import type { AgentServerTls } from './tls.ts';
import { EdgeThread, type Hello } from './edge/thread.ts';
import type { EdgeSocket } from './edge/socket.ts';

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
} as const;

/**
 * The agent port: WebSocket upgrades on `/`, authenticated before the upgrade so a refused agent
 * gets a plain HTTP status (401, 403, 404) it can log.
 */
export class AgentGateway {
  private edge: EdgeThread | undefined;
  private readonly sessions = new Set<AgentSession>();
  /** Accepted upgrade requests whose sockets have not opened yet. */
  private readonly accepted = new Map<number, { identity: AgentIdentity; hello: Hello; began: number }>();
  private readonly passwords = new VerifiedCache();
  private heartbeat: NodeJS.Timeout | undefined;
  private draining = false;
  private drained: Promise<void> | undefined;

  constructor(private readonly opts: AgentGatewayOptions) {}

  get sessionCount(): number {
    return this.sessions.size;
  }

  async start(): Promise<void> {
    const { tls } = this.opts;
    const edge = new EdgeThread(
      {
        host: this.opts.host,
        port: this.opts.port,
        node: this.opts.node,
        closeGraceMs: DEFAULTS.closeGraceMs,
        ...(tls ? { tls } : {}),
      },
      {
        hello: (h) => void this.hello(h),
        open: (socket) => this.open(socket),
        gone: (id) => this.accepted.delete(id),
        log: (level, msg, fields) => this.opts.log[level](msg, fields),
      },
    );
    await edge.start();
    this.edge = edge;
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

  /** An upgrade request on `/`, passed on by the edge thread: who is it, and may it connect? */
  private async hello(h: Hello): Promise<void> {
    const began = performance.now();
    const edge = this.edge!;
    let identity: AgentIdentity;
    try {
      if (h.cert && 'status' in h.cert) throw new HandshakeError(h.cert.status, h.cert.message);
      identity = await authenticateAgent(
        h,
        this.opts.config,
        this.passwords,
        this.opts.authz,
        this.opts.limits,
        h.cert?.user,
      );
    } catch (err) {
      const status = err instanceof HandshakeError ? err.status : 500;
      if (status === 500) this.opts.log.error('agent handshake failed', { error: (err as Error).message });
      else
        this.opts.log.info('agent handshake refused', {
          status,
          reason: (err as Error).message,
          remote: h.remote,
        });
      const retryAfterSec = (err as Partial<HandshakeError>).retryAfterSec;
      edge.refuse(
        h.id,
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
      edge.refuse(h.id, 402, ENTITY_LIMIT_MESSAGE);
      return;
    }
    // Authenticated while the node began to stop: this node would close it with 1001 at once.
    if (this.draining) {
      edge.refuse(h.id, 503, 'this backend is stopping; connect to another one');
      return;
    }
    this.accepted.set(h.id, { identity, hello: h, began });
    edge.accept(h.id);
  }

  private open(socket: EdgeSocket): void {
    const pending = this.accepted.get(socket.id);
    if (!pending) {
      socket.terminate();
      return;
    }
    this.accepted.delete(socket.id);
    const { identity, hello, began } = pending;
    const accept = hello.headers.accept;
    const codec = codecForAccept(Array.isArray(accept) ? accept[0] : accept);
    const session = new AgentSession(socket, identity, this.opts, codec, !!this.opts.tls);
    this.sessions.add(session);
    socket.on('close', () => this.sessions.delete(session));
    this.opts.log.info('agent connected', {
      namespace: identity.namespace,
      agent: identity.agentName,
      remote: hello.remote,
      encoding: codec.contentType,
      // From the upgrade request to the open socket: credentials, permission, the upgrade itself.
      handshake_ms: Math.round(performance.now() - began),
    });
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
    await this.edge?.drain();
  }

  async stop(): Promise<void> {
    await this.drain();
    await this.edge?.stop();
  }
}
