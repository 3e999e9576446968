/**
 * bench results: one simulated agent over a real WebSocket. After the handshake it sends a
 * keepalive (registers its entity), then, once pumping, check results with `check.executed` set,
 * keeping `window` events without an ack in flight: each ack (sent by the backend only once the
 * event is durable) releases the next send. Send time is the simulated execution time, so
 * send-to-ack latency is the "execution to stored" figure.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { decodeFrame, encodeFrame, jsonCodec, messageBytes } from '../../proto/frames.ts';
import { keepaliveEvent } from '../lib/keepalive.ts';
import type { Samples } from '../lib/stats.ts';

const AUTH = 'Basic ' + Buffer.from('agent:P@ssw0rd!').toString('base64');

/** Counters shared by every agent of a run; `recording` limits latency samples to the steady window. */
export class Tally {
  sent = 0;
  acked = 0;
  notOk = 0;
  /** Acks for ids we did not send (or acked twice). */
  unknown = 0;
  closed = 0;
  recording = false;
  notOkCodes = new Map<string, number>();
  constructor(readonly latency: Samples) {}
}

export class SimResultAgent {
  private ws: WebSocket | undefined;
  private open = false;
  private pumping = false;
  private seq = 0;
  private next = 0;
  /** id -> send time (performance.now()). */
  private readonly inFlight = new Map<string, number>();

  constructor(
    readonly name: string,
    private readonly url: string,
    private readonly checks: number,
    private readonly window: number,
    private readonly tally: Tally,
  ) {}

  get pending(): number {
    return this.inFlight.size;
  }

  /** Resolves true once open (and the keepalive sent), false on failure. */
  connect(): Promise<boolean> {
    return new Promise((resolve) => {
      const ws = new WebSocket(this.url, {
        headers: {
          'Monitor-Namespace': 'default',
          'Monitor-AgentName': this.name,
          'Monitor-Subscriptions': 'linux',
          Authorization: AUTH,
        },
        perMessageDeflate: false,
        handshakeTimeout: 60_000,
      });
      this.ws = ws;
      let settled = false;
      const settle = (ok: boolean) => {
        if (!settled) {
          settled = true;
          resolve(ok);
        }
      };
      ws.on('open', () => {
        this.open = true;
        ws.send(encodeFrame('keepalive', jsonCodec.encode(keepaliveEvent(this.name, ++this.seq))));
        settle(true);
      });
      ws.on('message', (data) => this.onMessage(messageBytes(data as Buffer)));
      ws.on('unexpected-response', (_req, res) => {
        settle(false);
        process.stderr.write(`[bench] ${this.name}: HTTP ${res.statusCode}\n`);
        ws.terminate();
      });
      ws.on('error', () => settle(false));
      ws.on('close', () => {
        if (this.open) this.tally.closed++;
        this.open = false;
        settle(false);
      });
    });
  }

  /** Fills the window; from then on every ack sends the next event. */
  start(): void {
    this.pumping = true;
    while (this.open && this.inFlight.size < this.window) this.sendEvent();
  }

  stop(): void {
    this.pumping = false;
  }

  close(): void {
    this.pumping = false;
    this.ws?.terminate();
  }

  private sendEvent(): void {
    const id = randomUUID();
    const now = Math.floor(Date.now() / 1000);
    const check = `check-${this.next++ % this.checks}`;
    const event = {
      timestamp: now,
      id,
      entity: {
        metadata: { name: this.name, namespace: 'default' },
        entity_class: 'agent',
        subscriptions: ['linux'],
      },
      check: {
        metadata: { name: check, namespace: 'default' },
        command: `true ${check}`,
        interval: 10,
        subscriptions: ['linux'],
        issued: now,
        executed: now,
        duration: 0.01,
        status: this.next % 17 === 0 ? 1 : 0,
        output: `${check} ok ${this.next}`,
      },
    };
    this.inFlight.set(id, performance.now());
    this.tally.sent++;
    this.ws!.send(encodeFrame('event', jsonCodec.encode(event)));
  }

  private onMessage(data: Buffer): void {
    let frame;
    try {
      frame = decodeFrame(data);
    } catch {
      return;
    }
    if (frame.type !== 'ack') return; // entity_config and the like
    let ack: { id?: unknown; ok?: unknown; code?: unknown };
    try {
      ack = jsonCodec.decode(frame.payload) as typeof ack;
    } catch {
      return;
    }
    const t = typeof ack.id === 'string' ? this.inFlight.get(ack.id) : undefined;
    if (t === undefined) {
      this.tally.unknown++;
      return;
    }
    this.inFlight.delete(ack.id as string);
    this.tally.acked++;
    if (ack.ok !== true) {
      this.tally.notOk++;
      const code = String(ack.code ?? 'no code');
      this.tally.notOkCodes.set(code, (this.tally.notOkCodes.get(code) ?? 0) + 1);
    }
    if (this.tally.recording) this.tally.latency.add(performance.now() - t);
    if (this.pumping && this.open) this.sendEvent();
  }
}
