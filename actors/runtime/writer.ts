import type { KvStore } from './kv-store.ts';
import type { Headers } from './nats-headers.ts';

interface Pending {
  bucket: string;
  key: string;
  value: Uint8Array | undefined;
  revision: number;
  headers: Headers | undefined;
  resolve(rev: number): void;
  reject(err: unknown): void;
}

const MAX_BATCH = 512;

/**
 * Group commit of state writes: every compare-and-set staged during one tick of the event loop goes
 * out together (one socket write, acknowledgements pipelined), instead of one round trip each.
 * Each caller still learns its own outcome, and replies wait for it.
 */
export class RecordWriter {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Batches flushed and writes sent, for metrics. */
  batches = 0;
  writes = 0;

  constructor(private readonly stores: Map<string, KvStore>) {}

  put(
    bucket: string,
    key: string,
    value: Uint8Array,
    expectedRevision: number,
    headers?: Headers,
  ): Promise<number> {
    return this.enqueue(bucket, key, value, expectedRevision, headers);
  }

  /**
   * Deletes with compare-and-set; resolves with the revision of the delete marker (0 when the key
   * never existed: there is nothing to delete and nothing to fence).
   */
  remove(bucket: string, key: string, expectedRevision: number, headers?: Headers): Promise<number> {
    return this.enqueue(bucket, key, undefined, expectedRevision, headers);
  }

  private enqueue(
    bucket: string,
    key: string,
    value: Uint8Array | undefined,
    revision: number,
    headers: Headers | undefined,
  ): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ bucket, key, value, revision, headers, resolve, reject });
      if (this.queue.length >= MAX_BATCH) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    this.batches++;
    this.writes += batch.length;
    for (const w of batch) {
      const store = this.stores.get(w.bucket);
      if (!store) {
        w.reject(new Error(`no KV bucket ${w.bucket}`));
        continue;
      }
      if (w.value === undefined) {
        if (w.revision === 0) {
          w.resolve(0);
          continue;
        }
        store.remove(w.key, w.revision, w.headers).then(w.resolve, w.reject);
      } else {
        store.put(w.key, w.value, w.revision, w.headers).then(w.resolve, w.reject);
      }
    }
  }
}
