import type { Logger } from '../../lib/log.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { Relay, type AckInfo, type Transport } from './relay.ts';
import { MEMORY_CACHE_DIR, MEMORY_QUEUE_LIMIT, MemoryQueue } from './memory.ts';
import { OutboxStore } from './store.ts';

// The outbox as the agent sees it: `submit` resolves once an event is on disk, and the relay sends
// it whenever a connection is up. Keepalives never come here: a stale one is worthless.

export { OutboxOpenError } from './lock.ts';

interface OutboxOptions {
  cacheDir: string;
  maxBytes: number;
  rate: number;
  burst: number;
  window?: number;
  ackTimeoutMs?: number;
  segmentBytes?: number;
  log: Logger;
}

export interface OutboxStats {
  queued: number;
  bytes: number;
  max_bytes: number;
  in_flight: number;
  sent: number;
  acked: number;
  rejected: number;
  /** Events the backend could not store for now and that were sent again after a backoff. */
  retried: number;
  refused: number;
}

export class Outbox {
  private readonly store: OutboxStore | MemoryQueue;
  private readonly relay: Relay;

  /** Throws OutboxOpenError (one clear line) when the cache-dir is locked or unusable. */
  constructor(transport: Transport, opts: OutboxOptions) {
    if (opts.cacheDir === MEMORY_CACHE_DIR) {
      opts.log.warn(
        'cache-dir is /dev/null: events are queued in memory only and lost when the agent stops',
        { max_events: MEMORY_QUEUE_LIMIT },
      );
      this.store = new MemoryQueue();
    } else {
      this.store = OutboxStore.open({
        cacheDir: opts.cacheDir,
        maxBytes: opts.maxBytes,
        segmentBytes: opts.segmentBytes,
        log: opts.log,
      });
    }
    this.relay = new Relay(this.store, transport, {
      rate: opts.rate,
      burst: opts.burst,
      window: opts.window,
      ackTimeoutMs: opts.ackTimeoutMs,
      log: opts.log,
    });
  }

  async submit(event: Event & { id: string }): Promise<void> {
    const entry = await this.store.append(event);
    this.relay.push(entry);
  }

  ack(a: AckInfo): void {
    this.relay.ack(a);
  }
  connected(): void {
    this.relay.connected();
  }
  disconnected(): void {
    this.relay.disconnected();
  }

  get stats(): OutboxStats {
    const s = this.store.stats;
    return {
      queued: s.queued,
      bytes: s.bytes,
      max_bytes: s.maxBytes,
      in_flight: this.relay.unacknowledged,
      sent: this.relay.sent,
      acked: this.relay.acked,
      rejected: this.relay.rejected,
      retried: this.relay.retried,
      refused: s.refused,
    };
  }

  async close(): Promise<void> {
    this.relay.stop();
    await this.store.close();
  }
}
