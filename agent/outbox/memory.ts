import { EventRefusedError } from '../events/prepare.ts';
import type { Entry, EventQueue } from './relay.ts';
import type { StoreStats } from './store.ts';

// cache-dir /dev/null means "no disk": events wait in memory, at most MEMORY_QUEUE_LIMIT of them,
// and are lost when the agent stops. Load tests run many agents this way (as Sensu's loadit does).

export const MEMORY_CACHE_DIR = '/dev/null';
export const MEMORY_QUEUE_LIMIT = 1000;

interface MemoryEntry extends Entry {
  event: unknown;
  bytes: number;
}

export class MemoryQueue implements EventQueue {
  private readonly live = new Map<number, MemoryEntry>();
  private nextSeq = 0;
  private bytes = 0;
  private refused = 0;
  private closed = false;

  append(event: { id: string }): Promise<Entry> {
    if (this.closed) return Promise.reject(new EventRefusedError('the agent is stopping'));
    if (this.live.size >= MEMORY_QUEUE_LIMIT) {
      this.refused++;
      return Promise.reject(
        new EventRefusedError(
          `event queue full (${MEMORY_QUEUE_LIMIT} events in memory: cache-dir is ${MEMORY_CACHE_DIR})`,
        ),
      );
    }
    const bytes = JSON.stringify(event).length;
    const entry: MemoryEntry = { seq: this.nextSeq++, id: event.id, event, bytes };
    this.live.set(entry.seq, entry);
    this.bytes += bytes;
    return Promise.resolve(entry);
  }

  entries(): Entry[] {
    return [...this.live.values()];
  }

  read(entry: Entry): unknown {
    return (entry as MemoryEntry).event;
  }

  ack(entry: Entry): void {
    const e = this.live.get(entry.seq);
    if (!e) return;
    this.live.delete(entry.seq);
    this.bytes -= e.bytes;
  }

  get stats(): StoreStats {
    return { queued: this.live.size, bytes: this.bytes, maxBytes: 0, segments: 0, refused: this.refused };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
