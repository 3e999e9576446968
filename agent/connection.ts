import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import * as v from 'valibot';
import WebSocket from 'ws';
import {
  Ack,
  CONTENT_JSON,
  CONTENT_PROTOBUF,
  decodeFrame,
  encodeFrame,
  jsonCodec,
  MAX_FRAME_BYTES,
  messageBytes,
  payloadCodecFor,
  type FrameType,
  type PayloadCodec,
} from '../proto/frames.ts';
import type { Logger } from '../lib/log.ts';
import { AGENT_CAPABILITIES, handshakeHeaders } from '../proto/schemas/handshake.ts';
import { Backoff } from './backoff.ts';
import { trustFailure } from '../lib/tls.ts';
import type { AgentTls } from './tls.ts';

// The agent's one WebSocket to some backend of the cluster. It never gives up: every failure (refused,
// timed out, HTTP 401/402/403/404/5xx at the handshake, dropped, silent) leads to the next URL after
// a backoff, because an agent that stops retrying is an outage nobody notices until keepalives alert.

export interface ConnectionOptions {
  urls: string[];
  namespace: string;
  agentName: string;
  user: string;
  password: string;
  subscriptions: string[];
  /** Seconds, like every duration here (fractions allowed). */
  handshakeTimeout: number;
  heartbeatInterval: number;
  heartbeatTimeout: number;
  retry: { min: number; max: number; multiplier: number };
  logger: Logger;
  /** Uniform in [0, 1): URL shuffle and backoff jitter; injected to make tests deterministic. */
  random?: () => number;
  /** Ask for protobuf payloads, as the reference's agent always does; the backend's answer decides. */
  protobuf?: boolean;
  /** Used for wss URLs; absent means Node's default trust store and no client certificate. */
  tls?: AgentTls;
}

interface ConnectedInfo {
  url: string;
  backendId: string | undefined;
}
/** `retryIn`: seconds until the next attempt; absent when the connection was closed for good. */
interface DisconnectedInfo {
  url: string;
  code: number;
  reason: string;
  retryIn?: number;
}

interface ConnectionEvents {
  connected: [info: ConnectedInfo];
  disconnected: [info: DisconnectedInfo];
  check_request: [value: unknown];
  entity_config: [value: unknown];
  ack: [value: Ack];
}

/** Backend URLs shuffled once, then taken round robin: agents of one host list spread over the cluster. */
export class BackendSelector {
  private readonly urls: string[];
  private index = 0;

  constructor(urls: string[], random: () => number = Math.random) {
    if (urls.length === 0) throw new RangeError('no backend URL');
    this.urls = [...urls];
    for (let i = this.urls.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [this.urls[i], this.urls[j]] = [this.urls[j]!, this.urls[i]!];
    }
  }

  next(): string {
    const url = this.urls[this.index]!;
    this.index = (this.index + 1) % this.urls.length;
    return url;
  }
}

/** One try at one URL; `failure` keeps the first reason so the log says why, not just "closed". */
interface Attempt {
  url: string;
  ws: WebSocket;
  opened: boolean;
  /** When the WebSocket opened (ms). */
  openedAt?: number;
  codec?: PayloadCodec;
  failure?: string;
  tlsError?: string;
  status?: number;
  /** A 429's `Retry-After` in seconds: the next attempt waits at least that long. */
  retryAfter?: number;
  backendId?: string;
}

const MAX_ERROR_BODY = 4096;
/**
 * A backend that closes an open connection with 1001 "going away" is stopping in order: the next URL
 * is tried after at most this long (jittered, so its agents do not all arrive at once), not after
 * the backoff (docs/architecture.md#agent-connect).
 */
const GOING_AWAY_MAX_DELAY_SEC = 0.25;
/** Quick retries in a row before the backoff applies again (a backend that keeps sending agents away). */
const GOING_AWAY_MAX_STREAK = 3;
/** A connection open at least this long ends a streak of going-away closes. */
const GOING_AWAY_STABLE_MS = 10_000;
/** The longest `Retry-After` honoured, so a wrong header cannot park the agent for days. */
const MAX_RETRY_AFTER_SEC = 3600;

export class BackendConnection extends EventEmitter<ConnectionEvents> {
  private readonly selector: BackendSelector;
  private readonly backoff: Backoff;
  private readonly log: Logger;
  private current: Attempt | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  /** Connections in a row closed with 1001 soon after they opened. */
  private goingAwayStreak = 0;
  /** The protobuf codec, imported by `start` when this agent asks for protobuf payloads. */
  private protobuf: PayloadCodec | undefined;

  constructor(private readonly opts: ConnectionOptions) {
    super();
    this.selector = new BackendSelector(opts.urls, opts.random);
    this.backoff = new Backoff({ ...opts.retry, random: opts.random });
    this.log = opts.logger;
  }

  get connected(): boolean {
    return !!this.current?.opened && this.current.ws.readyState === WebSocket.OPEN;
  }

  /** URL of the backend this agent is connected to, if any. */
  get url(): string | undefined {
    return this.connected ? this.current!.url : undefined;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    if (!this.opts.protobuf) return this.attempt();
    // protobufjs and the parsed monitor.proto are imported only by an agent that asks for protobuf
    // (off by default): they would cost every JSON agent memory for good
    // (docs/operations.md#agent-memory).
    import('../proto/wire/codec.ts').then(
      (m) => {
        this.protobuf = m.protobufCodec;
        this.attempt();
      },
      (err: unknown) => {
        // Never expected (the module ships with the agent); the attempt then fails on the answer.
        this.log.error('protobuf codec not loaded', { reason: (err as Error).message });
        this.attempt();
      },
    );
  }

  /**
   * Queues one frame; false when there is no open connection (the caller decides whether to keep it).
   * `onWritten` reports when the frame left the process, which is all a WebSocket can promise.
   */
  send(type: FrameType, value: unknown, onWritten?: (err?: Error) => void): boolean {
    if (!this.connected) return false;
    this.current!.ws.send(
      encodeFrame(type, (this.current!.codec ?? jsonCodec).encode(value, type)),
      { binary: true },
      onWritten,
    );
    return true;
  }

  /** Stops reconnecting and closes with 1000 so the backend ends the session at once. */
  async close(reason = 'agent stopping'): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const ws = this.current?.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      // A backend that never answers the close frame must not hold the agent's shutdown hostage.
      const force = setTimeout(() => ws.terminate(), 2000);
      ws.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, reason);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    });
  }

  private headers(url: string): Record<string, string> {
    const o = this.opts;
    // With a client certificate on wss the backend takes the user from its CN
    // (docs/compatibility.md#handshake).
    const mtls = isWss(url) && !!o.tls?.cert;
    const h: Record<string, string> = {
      'Monitor-Namespace': o.namespace,
      'Monitor-AgentName': o.agentName,
      'Monitor-Subscriptions': o.subscriptions.join(','),
      Accept: o.protobuf ? CONTENT_PROTOBUF : CONTENT_JSON,
      // The relay keeps and resends events refused with a retryable code; without this header the
      // backend must not send such refusals, since an older agent drops every refused event.
      [handshakeHeaders.capabilities]: [AGENT_CAPABILITIES.ackRetry].join(','),
    };
    if (!mtls) {
      h['Monitor-User'] = o.user;
      h.Authorization = 'Basic ' + Buffer.from(`${o.user}:${o.password}`, 'utf8').toString('base64');
    }
    return h;
  }

  private attempt(): void {
    if (this.stopped) return;
    const url = this.selector.next();
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, {
        headers: this.headers(url),
        maxPayload: MAX_FRAME_BYTES,
        perMessageDeflate: false,
        ...(isWss(url) ? this.opts.tls : {}),
      });
    } catch (err) {
      // Only a header the HTTP client rejects (non-ASCII user name, say) gets here; it will not heal.
      this.log.warn('backend connection failed', {
        url,
        reason: (err as Error).message,
        retry_in_seconds: this.scheduleRetry(),
      });
      return;
    }
    const a: Attempt = { url, ws, opened: false };
    this.current = a;
    const handshakeMs = this.opts.handshakeTimeout * 1000;
    const handshakeTimer = setTimeout(() => {
      a.failure ??= `handshake timed out after ${this.opts.handshakeTimeout}s`;
      ws.terminate();
    }, handshakeMs);

    ws.on('upgrade', (res) => {
      a.backendId = header(res, 'backend-id');
      // The payload encoding of this connection is the one the backend names (none: JSON).
      const type = header(res, 'content-type');
      a.codec = payloadCodecFor(type, this.protobuf);
      if (!a.codec)
        a.failure = `backend answered Content-Type ${type}; this agent speaks ${this.protobuf ? `${CONTENT_JSON} and ${CONTENT_PROTOBUF}` : CONTENT_JSON}`;
    });
    ws.on('unexpected-response', (_req, res) => this.readRejection(a, res));
    ws.on('open', () => {
      if (a.failure) {
        // A proper close frame tells the backend why; the close handler logs the failed attempt.
        ws.close(1003, 'unsupported content type');
        return;
      }
      clearTimeout(handshakeTimer);
      a.opened = true;
      a.openedAt = Date.now();
      this.backoff.reset();
      this.startHeartbeat(a);
      this.safeEmit('connected', { url, backendId: a.backendId });
    });
    ws.on('message', (data) => {
      this.armDeadline(a);
      this.receive(a, messageBytes(data));
    });
    ws.on('pong', () => this.armDeadline(a));
    ws.on('ping', () => this.armDeadline(a));
    ws.on('error', (err) => {
      // Both an untrusted backend certificate and the backend's alert about ours read the same way.
      const trust = trustFailure(err);
      if (trust && !a.failure) a.tlsError = err.message;
      a.failure ??= trust ?? err.message;
    });
    ws.on('close', (code, reason) => {
      clearTimeout(handshakeTimer);
      this.stopHeartbeat();
      const retryIn = this.goingAway(a, code) ? this.scheduleSoon() : this.scheduleRetry(a.retryAfter);
      if (a.opened) {
        this.safeEmit('disconnected', {
          url,
          code,
          reason: a.failure ?? (reason.toString() || closeName(code)),
          retryIn,
        });
      } else if (!this.stopped) {
        this.log.warn('backend connection failed', {
          url,
          reason: a.failure ?? closeName(code),
          ...(a.status ? { status: a.status } : {}),
          ...(a.tlsError ? { tls_error: a.tlsError } : {}),
          ...(retryIn !== undefined ? { retry_in_seconds: retryIn } : {}),
        });
      }
    });
  }

  /** An HTTP answer instead of 101: keep its status and message for the log, then drop the request. */
  private readRejection(a: Attempt, res: IncomingMessage): void {
    const status = res.statusCode ?? 0;
    a.status = status;
    // A backend blocking failed logins says when to come back (docs/compatibility.md#agent-reconnection).
    const retryAfter = Number(header(res, 'retry-after'));
    if (status === 429 && retryAfter > 0) a.retryAfter = Math.min(retryAfter, MAX_RETRY_AFTER_SEC);
    let body = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const message = errorMessage(body);
      a.failure ??= `HTTP ${status}${res.statusMessage ? ' ' + res.statusMessage : ''}${message ? ': ' + message : ''}`;
      a.ws.terminate();
    };
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      body += chunk;
      if (body.length >= MAX_ERROR_BODY) finish();
    });
    res.on('end', finish);
    res.on('error', finish);
    res.on('close', finish);
  }

  private receive(a: Attempt, data: Buffer): void {
    let type: FrameType;
    let value: unknown;
    try {
      const frame = decodeFrame(data);
      type = frame.type;
      value = (a.codec ?? jsonCodec).decode(frame.payload, frame.type);
    } catch (err) {
      this.log.warn('ignoring malformed frame from backend', { url: a.url, error: (err as Error).message });
      return;
    }
    switch (type) {
      case 'ack': {
        const r = v.safeParse(Ack, value);
        if (r.success) this.safeEmit('ack', r.output);
        else
          this.log.warn('ignoring malformed ack from backend', { url: a.url, error: r.issues[0]!.message });
        return;
      }
      case 'check_request':
        this.safeEmit('check_request', value);
        return;
      case 'entity_config':
        this.safeEmit('entity_config', value);
        return;
      default:
        this.log.warn('ignoring unexpected frame from backend', { url: a.url, type });
    }
  }

  // A listener's bug must not surface inside the ws read loop, where it would kill the socket.
  private safeEmit<K extends keyof ConnectionEvents>(event: K, ...args: ConnectionEvents[K]): void {
    try {
      (this.emit as (e: K, ...a: ConnectionEvents[K]) => boolean)(event, ...args);
    } catch (err) {
      this.log.error('connection listener failed', { event, error: err as Error });
    }
  }

  /** An open connection closed with 1001 by a stopping backend, and not yet a streak of them. */
  private goingAway(a: Attempt, code: number): boolean {
    if (!a.opened || code !== 1001) {
      if (a.opened) this.goingAwayStreak = 0;
      return false;
    }
    if (Date.now() - (a.openedAt ?? 0) >= GOING_AWAY_STABLE_MS) this.goingAwayStreak = 0;
    return ++this.goingAwayStreak <= GOING_AWAY_MAX_STREAK;
  }

  /** Arms the next attempt within GOING_AWAY_MAX_DELAY_SEC; answers its delay in seconds. */
  private scheduleSoon(): number | undefined {
    return this.armAttempt(() => (this.opts.random ?? Math.random)() * GOING_AWAY_MAX_DELAY_SEC);
  }

  /**
   * Arms the next attempt, no sooner than `atLeast` seconds; answers its delay in seconds (rounded
   * for logs), none once stopped.
   */
  private scheduleRetry(atLeast = 0): number | undefined {
    return this.armAttempt(() => Math.max(this.backoff.next(), atLeast));
  }

  /** Arms the next attempt after `delay()` seconds (not asked once stopped); answers it rounded for logs. */
  private armAttempt(delay: () => number): number | undefined {
    if (this.stopped) return undefined;
    const seconds = delay();
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.attempt(), seconds * 1000);
    return Math.round(seconds * 100) / 100;
  }

  // Pings keep proxies from idling the socket out; the deadline catches a backend that is gone without
  // a FIN (host down, partition), which TCP alone would notice only after many minutes.
  private startHeartbeat(a: Attempt): void {
    this.stopHeartbeat();
    this.pingTimer = setInterval(() => {
      try {
        a.ws.ping();
      } catch {
        /* the close handler reconnects */
      }
    }, this.opts.heartbeatInterval * 1000);
    this.armDeadline(a);
  }

  private armDeadline(a: Attempt): void {
    if (!a.opened || a !== this.current) return;
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      a.failure ??= `no data from backend for ${this.opts.heartbeatTimeout}s`;
      this.log.warn('backend heartbeat timed out', {
        url: a.url,
        timeout_seconds: this.opts.heartbeatTimeout,
      });
      a.ws.terminate();
    }, this.opts.heartbeatTimeout * 1000);
  }

  private stopHeartbeat(): void {
    clearInterval(this.pingTimer);
    clearTimeout(this.deadline);
    this.pingTimer = this.deadline = undefined;
  }
}

function header(res: IncomingMessage, name: string): string | undefined {
  const h = res.headers[name];
  return Array.isArray(h) ? h[0] : h;
}

/** The message of an error body, whether JSON (`{"message": …}`) or plain text. */
function errorMessage(body: string): string {
  const text = body.trim();
  if (!text) return '';
  try {
    const doc = JSON.parse(text) as { message?: unknown; error?: unknown };
    const m = doc.message ?? doc.error;
    if (typeof m === 'string') return m.slice(0, 200);
  } catch {
    /* plain text */
  }
  return text.split('\n')[0]!.slice(0, 200);
}

const isWss = (url: string) => /^wss:/i.test(url);

function closeName(code: number): string {
  return code === 1006 ? 'connection lost' : `closed with ${code}`;
}
