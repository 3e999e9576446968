import { RECOGNISED_WRITES_PER_CHECK, RETRYABLE_ACK_CODES } from '../../proto/frames.ts';
import type { Logger } from '../../lib/log.ts';
import { Backoff, type BackoffOptions } from '../backoff.ts';

/** A queued event as the relay sees it: its place in the queue and its id (what acks name). */
export interface Entry {
  seq: number;
  id: string;
}

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
// An ack refused with a retryable code (RETRYABLE_ACK_CODES: the backend could not make the event
// durable this time, say a NATS node died mid-write) puts the event back in the line and pauses all
// sending for a growing, jittered backoff, so agents do not hammer a cluster that is failing over.
// Of one check, at most RECOGNISED_WRITES_PER_CHECK events are unacknowledged at a time (sent and not
// yet answered, whether in flight or put back): the backend recognises a resend among that many latest
// writes of its check, so a resend that comes after a long stall is still not applied twice. The line
// waits for the check's oldest answer rather than sending around it, which keeps each check in order.

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
  /** Unacknowledged events of one check (entity and check name); default RECOGNISED_WRITES_PER_CHECK. */
  perCheck?: number;
  /** An event unacknowledged this long is sent again (the backend may have failed to store it); default 30 s. */
  ackTimeoutMs?: number;
  /** Pauses after retryable refusals, in milliseconds; default RETRY_BACKOFF_MS. */
  retryBackoff?: Partial<BackoffOptions>;
  log: Logger;
}

/**
 * 250 ms catches a blip (an actor moving) almost at once; doubling reaches the 10 s cap in about
 * six rounds, which outlasts a JetStream leader election, and the cap stays well under the 30 s ack
 * timeout so a retryable refusal never recovers slower than silence would. Jitter (up to 100%)
 * spreads the agents a failover refused all at once.
 */
export const RETRY_BACKOFF_MS: BackoffOptions = { min: 250, max: 10_000, multiplier: 2 };

export interface AckInfo {
  id: string;
  ok: boolean;
  code?: string;
  message?: string;
}

/** `pause`: how many pauses had begun when the event was sent (see `retryLater`). */
interface InFlight {
  entry: Entry;
  sentAt: number;
  pause: number;
}

/** A run of retryable refusals, from the first one to the next accepted event: logged once. */
interface Episode {
  since: number;
  retried: number;
}

const isRetryable = (code: string | undefined) => code !== undefined && RETRYABLE_ACK_CODES.includes(code);

/**
 * The record an event writes on the backend: its entity's and check's names; none for an event
 * without a check (metrics only), which the backend does not store.
 */
function checkKey(event: unknown): string | undefined {
  const e = event as
    { entity?: { metadata?: { name?: unknown } }; check?: { metadata?: { name?: unknown } } } | undefined;
  const check = e?.check?.metadata?.name;
  if (typeof check !== 'string') return undefined;
  return `${String(e?.entity?.metadata?.name ?? '')}\u0000${check}`;
}

export class Relay {
  /** Entries waiting to be sent, in order; `head` avoids shifting a long array. */
  private queue: Entry[] = [];
  private head = 0;
  /**
   * Entries put back (refused as retryable, or unacknowledged at a disconnect or for too long), by
   * seq. They were all in flight, so there are about a window of them at most: inserting here stays
   * cheap however long the on-disk backlog in `queue` is. `pump` sends whichever line is older first.
   */
  private returned: Entry[] = [];
  private readonly inFlight = new Map<string, InFlight>();
  /** Sent and not yet answered for good (in flight or put back): id to check key, and count per key. */
  private readonly unanswered = new Map<string, string>();
  private readonly perKey = new Map<string, number>();
  /** The entry at the head of the line that waits for its check, and that check: read once, not at every ack. */
  private blockedHead: { id: string; key: string } | undefined;
  private tokens: number;
  private lastRefill = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  /** Set while sending is paused after a retryable refusal. */
  private pauseTimer: NodeJS.Timeout | undefined;
  private pauses = 0;
  private episode: Episode | undefined;
  private readonly retryBackoff: Backoff;
  private readonly window: number;
  private readonly perCheck: number;
  private readonly ackTimeoutMs: number;
  private stopped = false;
  sent = 0;
  acked = 0;
  rejected = 0;
  /** Retryable refusals: each one put an event back in the line. */
  retried = 0;

  constructor(
    private readonly store: EventQueue,
    private readonly transport: Transport,
    private readonly opts: RelayOptions,
  ) {
    this.window = opts.window ?? 100;
    this.perCheck = opts.perCheck ?? RECOGNISED_WRITES_PER_CHECK;
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 30_000;
    this.tokens = opts.burst;
    this.retryBackoff = new Backoff({ ...RETRY_BACKOFF_MS, ...opts.retryBackoff });
    this.queue = store.entries();
    this.sweeper = setInterval(
      () => this.resendStale(),
      Math.max(100, Math.min(5000, this.ackTimeoutMs / 2)),
    );
    this.sweeper.unref();
  }

  get waiting(): number {
    return this.queue.length - this.head + this.returned.length;
  }
  get unacknowledged(): number {
    return this.inFlight.size;
  }
  /** True while sending waits out a backoff after a retryable refusal. */
  get paused(): boolean {
    return this.pauseTimer !== undefined;
  }

  /** A freshly stored entry joins the end of the line. */
  push(entry: Entry): void {
    this.queue.push(entry);
    this.pump();
  }

  ack(a: AckInfo): void {
    const f = this.inFlight.get(a.id);
    if (!f) return; // an ack for an event resent meanwhile or acknowledged already
    if (!a.ok && isRetryable(a.code)) {
      this.retryLater(f, a);
      return;
    }
    this.inFlight.delete(a.id);
    this.answered(a.id);
    if (a.ok) this.accepted();
    else {
      this.rejected++;
      this.opts.log.warn('backend refused an event for good; dropping it', {
        id: a.id,
        code: a.code,
        message: a.message,
      });
    }
    this.store.ack(f.entry);
    this.pump();
  }

  connected(): void {
    this.pump();
  }

  /** Unacknowledged events go back to the front of the line, in order, for the next connection. */
  disconnected(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.requeue([...this.inFlight.values()]);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.pauseTimer);
    this.timer = this.pauseTimer = undefined;
    clearInterval(this.sweeper);
  }

  private answered(id: string): void {
    const key = this.unanswered.get(id);
    if (key === undefined) return;
    this.unanswered.delete(id);
    const n = (this.perKey.get(key) ?? 1) - 1;
    if (n > 0) this.perKey.set(key, n);
    else this.perKey.delete(key);
  }

  /** The backend stored an event: it is healthy enough that the next refusal starts from the shortest pause. */
  private accepted(): void {
    this.acked++;
    this.retryBackoff.reset();
    if (!this.episode) return;
    this.opts.log.info('backend stores events again', {
      retried: this.episode.retried,
      seconds: (Date.now() - this.episode.since) / 1000,
    });
    this.episode = undefined;
  }

  /** A retryable refusal: the event stays queued (no store.ack) and goes back in the line, in order. */
  private retryLater(f: InFlight, a: AckInfo): void {
    this.retried++;
    this.requeue([f]);
    this.startEpisode(a);
    this.episode!.retried++;
    // Only a refusal of an event sent since the last pause began says the backend is still failing;
    // the other refusals of a burst answer sends the current pause already accounts for, and letting
    // each of them pause again would run the backoff up to its cap after a single failed round.
    if (f.pause === this.pauses) this.pause();
    this.pump();
  }

  private startEpisode(a: AckInfo): void {
    if (this.episode) return;
    this.episode = { since: Date.now(), retried: 0 };
    // One line per episode: a failover can refuse hundreds of events, and the first says it all.
    this.opts.log.warn('backend could not store events for now; resending them after a backoff', {
      id: a.id,
      code: a.code,
      message: a.message,
    });
  }

  private pause(): void {
    const delayMs = Math.round(this.retryBackoff.next());
    this.pauses++;
    clearTimeout(this.pauseTimer);
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = undefined;
      this.pump();
    }, delayMs);
    this.opts.log.debug('pausing event sends after a retryable refusal', { retry_in_ms: delayMs });
  }

  /**
   * Puts entries back in the line by seq: a refused event comes back after an older one refused
   * earlier, not before it, and before every later event.
   */
  private requeue(items: InFlight[]): void {
    for (const f of items) {
      this.inFlight.delete(f.entry.id);
      const at = this.returned.findIndex((e) => e.seq > f.entry.seq);
      this.returned.splice(at === -1 ? this.returned.length : at, 0, f.entry);
    }
  }

  /** The oldest waiting entry, from either line. */
  private next(): Entry | undefined {
    const back = this.returned[0];
    const fresh = this.queue[this.head];
    return back && (!fresh || back.seq < fresh.seq) ? back : fresh;
  }

  /** Takes `entry`, which `next()` just answered, off its line. */
  private take(entry: Entry): void {
    if (entry === this.returned[0]) this.returned.shift();
    else this.head++;
  }

  private resendStale(): void {
    const cutoff = Date.now() - this.ackTimeoutMs;
    const stale = [...this.inFlight.values()].filter((f) => f.sentAt <= cutoff);
    if (stale.length === 0) return;
    this.opts.log.warn('events unacknowledged for too long; sending them again', {
      count: stale.length,
      timeout_seconds: this.ackTimeoutMs / 1000,
    });
    this.requeue(stale);
    this.pump();
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((now - this.lastRefill) / 1000) * this.opts.rate);
    this.lastRefill = now;
  }

  private pump(): void {
    if (this.stopped || this.timer || this.pauseTimer) return;
    while (this.inFlight.size < this.window && this.transport.connected) {
      const entry = this.next();
      if (!entry) break;
      // Two queued events with one id: the second waits, so one ack never settles both.
      if (this.inFlight.has(entry.id)) return;
      this.refill();
      if (this.tokens < 1) {
        const wait = Math.ceil(((1 - this.tokens) / this.opts.rate) * 1000);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, wait);
        return;
      }
      const w = this.blockedHead;
      if (w?.id === entry.id && (this.perKey.get(w.key) ?? 0) >= this.perCheck) return;
      let event: unknown;
      try {
        event = this.store.read(entry);
      } catch (err) {
        // An unreadable record cannot become readable later; keeping it would block the queue forever.
        this.opts.log.error('dropping an event that cannot be read back from the queue', {
          id: entry.id,
          error: (err as Error).message,
        });
        this.take(entry);
        this.store.ack(entry);
        continue;
      }
      const key = checkKey(event);
      const counted = key !== undefined && !this.unanswered.has(entry.id);
      // Waits for an answer to one of the check's earlier events; ack() pumps again.
      if (counted && (this.perKey.get(key) ?? 0) >= this.perCheck) {
        this.blockedHead = { id: entry.id, key };
        return;
      }
      if (!this.transport.send(event)) return;
      this.tokens -= 1;
      this.take(entry);
      this.sent++;
      if (counted) {
        this.unanswered.set(entry.id, key);
        this.perKey.set(key, (this.perKey.get(key) ?? 0) + 1);
      }
      this.inFlight.set(entry.id, { entry, sentAt: Date.now(), pause: this.pauses });
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
