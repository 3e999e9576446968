import type { Logger } from '../../proto/log.ts';

/** A queued event as the relay sees it: its place in the queue and its id (what acks name). */
export interface Entry { seq: number; id: string }

/** The queue behind the relay: the on-disk store, or the memory one for cache-dir /dev/null. */
export interface EventQueue {
  /** Unacknowledged entries, oldest first. */
  entries(): Entry[];
  read(entry: Entry): unknown;
  ack(entry: Entry): void;
}

// Sends queued events to the backend, oldest first, at most `rate` per second (token bucket of
// `burst`) and at most `window` unacknowledged at a time, so a slow backend slows the agent down
// instead of the agent piling frames onto its socket. Whatever is unacknowledged when the connection
// drops is sent again, in order, after the next connect; the backend ignores repeats by event id.

/** What the relay needs from the connection; false from `send` means "not connected". */
export interface Transport {
  readonly connected: boolean;
  send(event: unknown): boolean;
}

export interface RelayOptions {
  rate: number;
  burst: number;
  /** Unacknowledged events in flight; default 100. */
  window?: number;
  /** An event unacknowledged this long is sent again (the backend may have failed to store it); default 30 s. */
  ackTimeoutMs?: number;
  log: Logger;
}

export interface AckInfo { id: string; ok: boolean; code?: string; message?: string }

interface InFlight { entry: Entry; sentAt: number }

export class Relay {
  /** Entries waiting to be sent, in order; `head` avoids shifting a long array. */
  private queue: Entry[] = [];
  private head = 0;
  private readonly inFlight = new Map<string, InFlight>();
  private tokens: number;
  private lastRefill = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly window: number;
  private readonly ackTimeoutMs: number;
  private stopped = false;
  sent = 0;
  acked = 0;
  rejected = 0;

  constructor(private readonly store: EventQueue, private readonly transport: Transport, private readonly opts: RelayOptions) {
    this.window = opts.window ?? 100;
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 30_000;
    this.tokens = opts.burst;
    this.queue = store.entries();
    this.sweeper = setInterval(() => this.resendStale(), Math.max(100, Math.min(5000, this.ackTimeoutMs / 2)));
    this.sweeper.unref();
  }

  get waiting(): number { return this.queue.length - this.head; }
  get unacknowledged(): number { return this.inFlight.size; }

  /** A freshly stored entry joins the end of the line. */
  push(entry: Entry): void {
    this.queue.push(entry);
    this.pump();
  }

  ack(a: AckInfo): void {
    const f = this.inFlight.get(a.id);
    if (!f) return; // an ack for an event resent meanwhile or acknowledged already
    this.inFlight.delete(a.id);
    if (a.ok) this.acked++;
    else {
      this.rejected++;
      this.opts.log.warn('backend refused an event for good; dropping it', { id: a.id, code: a.code, message: a.message });
    }
    this.store.ack(f.entry);
    this.pump();
  }

  connected(): void { this.pump(); }

  /** Unacknowledged events go back to the front of the line, in order, for the next connection. */
  disconnected(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.requeue([...this.inFlight.values()]);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
  }

  private requeue(items: InFlight[]): void {
    if (items.length === 0) return;
    for (const f of items) this.inFlight.delete(f.entry.id);
    const back = items.map((f) => f.entry).sort((a, b) => a.seq - b.seq);
    this.queue = back.concat(this.queue.slice(this.head));
    this.head = 0;
  }

  private resendStale(): void {
    const cutoff = Date.now() - this.ackTimeoutMs;
    const stale = [...this.inFlight.values()].filter((f) => f.sentAt <= cutoff);
    if (stale.length === 0) return;
    this.opts.log.warn('events unacknowledged for too long; sending them again', { count: stale.length, timeout_seconds: this.ackTimeoutMs / 1000 });
    this.requeue(stale);
    this.pump();
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((now - this.lastRefill) / 1000) * this.opts.rate);
    this.lastRefill = now;
  }

  private pump(): void {
    if (this.stopped || this.timer) return;
    while (this.head < this.queue.length && this.inFlight.size < this.window && this.transport.connected) {
      const entry = this.queue[this.head]!;
      // Two queued events with one id: the second waits, so one ack never settles both.
      if (this.inFlight.has(entry.id)) return;
      this.refill();
      if (this.tokens < 1) {
        const wait = Math.ceil(((1 - this.tokens) / this.opts.rate) * 1000);
        this.timer = setTimeout(() => { this.timer = undefined; this.pump(); }, wait);
        return;
      }
      let event: unknown;
      try {
        event = this.store.read(entry);
      } catch (err) {
        // An unreadable record cannot become readable later; keeping it would block the queue forever.
        this.opts.log.error('dropping an event that cannot be read back from the queue', { id: entry.id, error: (err as Error).message });
        this.head++;
        this.store.ack(entry);
        continue;
      }
      if (!this.transport.send(event)) return;
      this.tokens -= 1;
      this.head++;
      this.sent++;
      this.inFlight.set(entry.id, { entry, sentAt: Date.now() });
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
