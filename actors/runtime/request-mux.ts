import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import type { Slices } from '../../lib/slices.ts';

// Request/reply for the NATS adapter (nats.ts). The errors a request can end with live here, where
// they are raised, so callers (ask.ts, the KV store) tell them apart without importing the connection.

export class NoRespondersError extends Error {
  constructor(subject: string) {
    super(`no responders on ${subject}`);
    this.name = 'NoRespondersError';
  }
}
export class RequestTimeoutError extends Error {
  constructor(subject: string) {
    super(`request timed out on ${subject}`);
    this.name = 'RequestTimeoutError';
  }
}

interface PendingRequest {
  subject: string;
  resolve(m: Msg): void;
  reject(e: Error): void;
}

/** Requests of one timeout, in the order sent: their deadlines come due in that order too. */
class DeadlineQueue {
  private tokens: string[] = [];
  private deadlines: number[] = [];
  private head = 0;
  push(token: string, deadline: number): void {
    this.tokens.push(token);
    this.deadlines.push(deadline);
  }
  /** Tokens whose deadline has passed. */
  *due(now: number): Generator<string> {
    while (this.head < this.tokens.length && this.deadlines[this.head]! <= now)
      yield this.tokens[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.tokens.length) {
      this.tokens = this.tokens.slice(this.head);
      this.deadlines = this.deadlines.slice(this.head);
      this.head = 0;
    }
  }
}

const SWEEP_MS = 50;

/**
 * Request/reply over one wildcard inbox: replies are matched by token, and timeouts are found by one
 * sweep (a request times out at most SWEEP_MS late) instead of a timer per request. The client
 * library's own request builds an Error object (with a stack) to cancel each finished request, which
 * cost a tenth of the CPU of every ask and KV write.
 */
export class RequestMux {
  private readonly inbox = createInbox();
  private readonly pending = new Map<string, PendingRequest>();
  private readonly queues = new Map<number, DeadlineQueue>();
  private readonly sweep: NodeJS.Timeout;
  private seq = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly slices: Slices,
  ) {
    nc.subscribe(`${this.inbox}.*`, {
      callback: (err, m) => {
        if (!err) this.onReply(m);
      },
    });
    this.sweep = setInterval(() => this.expire(), SWEEP_MS);
    this.sweep.unref();
  }

  request(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    const token = (this.seq++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      this.pending.set(token, { subject, resolve, reject });
      let q = this.queues.get(timeoutMs);
      if (!q) {
        q = new DeadlineQueue();
        this.queues.set(timeoutMs, q);
      }
      q.push(token, Date.now() + timeoutMs);
      try {
        this.nc.publish(subject, data, { reply: `${this.inbox}.${token}`, headers });
      } catch (err) {
        this.pending.delete(token);
        reject(err as Error);
      }
    });
  }

  private expire(): void {
    const now = Date.now();
    for (const q of this.queues.values()) {
      for (const token of q.due(now)) {
        const p = this.pending.get(token);
        if (!p) continue;
        this.pending.delete(token);
        p.reject(new RequestTimeoutError(p.subject));
      }
    }
  }

  private onReply(m: Msg): void {
    const token = m.subject.slice(this.inbox.length + 1);
    const p = this.pending.get(token);
    if (!p) return;
    this.pending.delete(token);
    // Taken off the sweep now; what waits on it runs in its slice (./slices.ts).
    // The server answers 503 on the reply subject when nobody listens on the request subject.
    if (m.headers?.code === 503 && m.data.length === 0)
      this.slices.run(() => p.reject(new NoRespondersError(p.subject)));
    else this.slices.run(() => p.resolve(m));
  }

  close(): void {
    clearInterval(this.sweep);
  }
}
