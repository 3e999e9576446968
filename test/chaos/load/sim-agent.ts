/**
 * A simulated agent over a real WebSocket, speaking the agent protocol as monitor-agent does
 * (handshake headers as bench/agents/connect.ts, frames from proto/frames.ts) at a fraction of its
 * cost, so a test process can run hundreds:
 *
 * - announces `ack-retry`, so the backend answers every event with an `ack`; keeps unacknowledged
 *   events like the agent's outbox: `ok:false` with a retryable code puts the event back in line (in
 *   order) and pauses sending for a jittered backoff (250 ms doubling to 10 s, agent/outbox/relay.ts);
 *   after a reconnect every unacknowledged event is sent again, in order; at most
 *   RECOGNISED_WRITES_PER_CHECK events of one check are unacknowledged at a time (the line waits);
 * - a keepalive at once on open and then every interval, with the warning timeout the backend judges;
 * - heartbeat: pings a quiet socket and drops it when nothing came for HEARTBEAT_TIMEOUT_MS (a frozen
 *   backend behind HAProxy never closes the socket);
 * - sends at most the agent's default --events-rate-limit and --events-burst-limit (10/s, burst 10),
 *   so a reconnect resends its backlog as an agent does, not all of it at once;
 * - reconnects after every close: within 250 ms after 1001 (a backend going away, jittered as the
 *   agent's connection does), after a short jittered backoff otherwise;
 * - records check requests it receives (the scheduler's ticks) and every close and reopen.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import {
  decodeFrame,
  encodeFrame,
  jsonCodec,
  messageBytes,
  RECOGNISED_WRITES_PER_CHECK,
  RETRYABLE_ACK_CODES,
} from '../../../proto/frames.ts';
import type { EventOp, History, Reconnect } from '../checker/history.ts';
import { checkBody, eventSlot, NS } from './events.ts';

const AUTH = 'Basic ' + Buffer.from('agent:P@ssw0rd!').toString('base64');
const WINDOW = 100;
const HEARTBEAT_MS = 2000;
const HEARTBEAT_TIMEOUT_MS = 8000;
const RETRY = { min: 250, max: 10_000 };
/** The agent's defaults: --events-rate-limit, --events-burst-limit (agent/outbox/relay.ts). */
const RATE = { perSecond: 10, burst: 10 };
/** The agent's jitter before reconnecting after a 1001 close (agent/connection.ts). */
const GOING_AWAY_MAX_DELAY_MS = 250;

export interface KeepaliveSettings {
  intervalS: number;
  warningS: number;
}

interface Pending {
  seq: number;
  id: string;
  op: EventOp;
  body: unknown;
}

const checkOf = (p: Pending) => (p.body as { check: { metadata: { name: string } } }).check.metadata.name;
const jitter = (ms: number) => ms * (0.5 + Math.random() * 0.5);

export class SimAgent {
  private ws: WebSocket | undefined;
  private node: string | undefined;
  private open = false;
  /** Closed for good by the test (a dead agent); no reconnect. */
  dead = false;
  private seq = 0;
  private kaSeq = 0;
  /** Waiting to be sent, by seq; resends go back here in order. */
  private queue: Pending[] = [];
  private readonly inflight = new Map<string, Pending>();
  /** Events sent and not answered for good (in flight or put back), by check; and their ids. */
  private readonly perCheck = new Map<string, number>();
  private readonly unanswered = new Set<string>();
  private pausedUntil = 0;
  private retryMs = RETRY.min;
  private failures = 0;
  private lastHeard = 0;
  private away: Reconnect | undefined;
  private timers: NodeJS.Timeout[] = [];
  private pumpTimer: NodeJS.Timeout | undefined;
  private tokens = RATE.burst;
  private lastRefill = Date.now();
  /** Events sent, counting resends. */
  sent = 0;

  constructor(
    readonly name: string,
    private readonly url: string,
    readonly subscriptions: string[],
    private readonly keepalive: KeepaliveSettings,
    private readonly history: History,
  ) {}

  get connected(): boolean {
    return this.open;
  }
  /** Events not acknowledged yet. */
  get outstanding(): number {
    return this.queue.length + this.inflight.size;
  }

  start(): void {
    this.timers.push(setInterval(() => this.sendKeepalive(), this.keepalive.intervalS * 1000));
    this.timers.push(setInterval(() => this.heartbeat(), HEARTBEAT_MS));
    this.connect();
  }

  /** One new event, queued like the agent's outbox does and sent when the window allows. */
  submit(): void {
    if (this.dead) return;
    const seq = ++this.seq;
    const { check, token } = eventSlot('g', seq);
    const op = this.history.invoke({ process: this.name, source: 'agent', entity: this.name, check, token });
    const id = randomUUID();
    const body = {
      id,
      timestamp: Math.floor(Date.now() / 1000),
      entity: this.entity(),
      check: checkBody(check, token),
    };
    this.queue.push({ seq, id, op, body });
    this.pump();
  }

  /** Closes for good, as a host that died would (no goodbye, no reconnect). */
  kill(): void {
    this.dead = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.pumpTimer);
    this.ws?.terminate();
  }

  private entity() {
    return {
      metadata: { name: this.name, namespace: NS },
      entity_class: 'agent',
      subscriptions: this.subscriptions,
    };
  }

  private connect(): void {
    if (this.dead) return;
    const startedAt = Date.now();
    const ws = new WebSocket(this.url, {
      headers: {
        'Monitor-Namespace': NS,
        'Monitor-AgentName': this.name,
        'Monitor-Subscriptions': this.subscriptions.join(','),
        'Monitor-Capabilities': 'ack-retry',
        Authorization: AUTH,
      },
      perMessageDeflate: false,
      // The real agent's default --backend-handshake-timeout.
      handshakeTimeout: 15_000,
    });
    this.ws = ws;
    // The node that answered this attempt, if one did (our refusals name it too).
    let answeredBy: string | undefined;
    const backendId = (res: { headers: Record<string, string | string[] | undefined> }) => {
      const id = res.headers['backend-id'];
      return Array.isArray(id) ? id[0] : id;
    };
    ws.on('upgrade', (res) => {
      this.node = answeredBy = backendId(res);
    });
    ws.on('open', () => this.onOpen());
    ws.on('message', (data) => this.onMessage(messageBytes(data as Buffer)));
    ws.on('pong', () => (this.lastHeard = Date.now()));
    let why = 'closed before open';
    ws.on('unexpected-response', (_req, res) => {
      answeredBy = backendId(res);
      why = `HTTP ${res.statusCode}`;
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err) => {
      // The close that follows does the work; the reason is kept for a failed attempt. After an HTTP
      // answer, ws reports the terminate() above as an error too: the status says more.
      if (!why.startsWith('HTTP ')) why = (err as NodeJS.ErrnoException).code ?? err.message;
    });
    ws.on('close', () => {
      if (!this.open && ws === this.ws)
        this.history.connectFailures.push({
          agent: this.name,
          startedAt,
          at: Date.now(),
          reason: why,
          node: answeredBy,
        });
    });
    ws.on('close', (code) => this.onClose(ws, code));
  }

  private onOpen(): void {
    this.open = true;
    this.failures = 0;
    this.lastHeard = Date.now();
    if (this.away) {
      this.away.openedAt = Date.now();
      this.away = undefined;
    }
    this.sendKeepalive();
    this.pump();
  }

  private onClose(ws: WebSocket, code: number): void {
    if (ws !== this.ws) return;
    const wasOpen = this.open;
    this.open = false;
    if (wasOpen) {
      this.away = { agent: this.name, node: this.node, code, closedAt: Date.now() };
      this.history.reconnects.push(this.away);
    }
    // Whatever was unacknowledged is sent again after the reconnect, in order.
    this.queue = [...this.inflight.values(), ...this.queue].sort((a, b) => a.seq - b.seq);
    this.inflight.clear();
    if (this.dead) return;
    const delay =
      wasOpen && code === 1001
        ? Math.random() * GOING_AWAY_MAX_DELAY_MS
        : jitter(Math.min(2000, 200 * 2 ** this.failures++));
    setTimeout(() => this.connect(), delay);
  }

  private onMessage(data: Buffer): void {
    this.lastHeard = Date.now();
    let type: string, body: any;
    try {
      const frame = decodeFrame(data);
      type = frame.type;
      body = jsonCodec.decode(frame.payload);
    } catch {
      return;
    }
    if (type === 'ack') this.onAck(body);
    else if (type === 'check_request')
      this.history.ticks.push({
        agent: this.name,
        check: body?.config?.metadata?.name,
        issued: body?.issued,
        at: Date.now(),
        node: this.node,
      });
  }

  private onAck(a: { id: string; ok: boolean; code?: string; message?: string }): void {
    const p = this.inflight.get(a.id);
    if (!p) return; // an answer to a send made before a reconnect: its resend will be answered too
    this.inflight.delete(a.id);
    const retry = !a.ok && a.code !== undefined && RETRYABLE_ACK_CODES.includes(a.code);
    if (!retry && this.unanswered.delete(p.id)) {
      const check = checkOf(p);
      this.perCheck.set(check, (this.perCheck.get(check) ?? 1) - 1);
    }
    if (a.ok) {
      this.history.complete(p.op, 'ok', { node: this.node });
      this.retryMs = RETRY.min;
    } else if (a.code !== undefined && RETRYABLE_ACK_CODES.includes(a.code)) {
      this.queue.push(p);
      this.queue.sort((x, y) => x.seq - y.seq);
      this.pausedUntil = Date.now() + jitter(this.retryMs);
      this.retryMs = Math.min(RETRY.max, this.retryMs * 2);
    } else {
      this.history.complete(p.op, 'fail', { node: this.node, error: `${a.code}: ${a.message}` });
    }
    this.pump();
  }

  private pump(): void {
    if (!this.open || !this.ws) return;
    const wait = this.pausedUntil - Date.now();
    if (wait > 0) {
      clearTimeout(this.pumpTimer);
      this.pumpTimer = setTimeout(() => this.pump(), wait);
      return;
    }
    while (this.queue.length > 0 && this.inflight.size < WINDOW) {
      const p = this.queue[0]!;
      const check = checkOf(p);
      const fresh = !this.unanswered.has(p.id);
      if (fresh && (this.perCheck.get(check) ?? 0) >= RECOGNISED_WRITES_PER_CHECK) return;
      const now = Date.now();
      this.tokens = Math.min(RATE.burst, this.tokens + ((now - this.lastRefill) / 1000) * RATE.perSecond);
      this.lastRefill = now;
      if (this.tokens < 1) {
        clearTimeout(this.pumpTimer);
        this.pumpTimer = setTimeout(() => this.pump(), ((1 - this.tokens) / RATE.perSecond) * 1000);
        return;
      }
      this.tokens -= 1;
      this.queue.shift();
      if (fresh) {
        this.unanswered.add(p.id);
        this.perCheck.set(check, (this.perCheck.get(check) ?? 0) + 1);
      }
      this.inflight.set(p.id, p);
      p.op.attempts++;
      this.sent++;
      this.ws.send(encodeFrame('event', jsonCodec.encode(p.body)));
    }
  }

  private sendKeepalive(): void {
    if (!this.open || !this.ws) return;
    const event = {
      id: randomUUID(),
      timestamp: Math.floor(Date.now() / 1000),
      sequence: ++this.kaSeq,
      entity: this.entity(),
      check: {
        metadata: { name: 'keepalive' },
        interval: this.keepalive.intervalS,
        timeout: this.keepalive.warningS,
        ttl: 0,
      },
    };
    this.ws.send(encodeFrame('keepalive', jsonCodec.encode(event)));
  }

  private heartbeat(): void {
    if (!this.open || !this.ws) return;
    const quiet = Date.now() - this.lastHeard;
    if (quiet > HEARTBEAT_TIMEOUT_MS) this.ws.terminate();
    else if (quiet > HEARTBEAT_MS) this.ws.ping();
  }
}
