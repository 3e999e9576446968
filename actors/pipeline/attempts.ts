import type { JsMsg } from 'nats';
import type { KvStore } from '../runtime/kv-store.ts';
import type { Logger } from '../../lib/log.ts';

/**
 * Counts the starts of a pipeline job that never finished, so that a job which takes its node down
 * (or fails) every time is parked after a few tries instead of being redelivered forever, taking
 * down each node in turn (docs/architecture.md#the-pipeline).
 *
 * JetStream's delivery count alone cannot tell: it also counts the worker's own put-backs (a job
 * deferred while its handler is at its cap, the buffered jobs of a stopping node), and parking on
 * it would drop healthy jobs of a busy handler. So a node records each start of a *redelivered* job
 * in a KV bucket, keyed by the job's stream sequence, before running it, and removes the record once
 * the job is acknowledged. A first delivery (nearly every job) records nothing and is counted as a
 * start whatever happened to it: a job runs at most `maxAttempts` times.
 */
export class JobAttempts {
  constructor(
    private readonly kv: KvStore,
    private readonly maxAttempts: number,
    private readonly log: Logger,
  ) {}

  /**
   * Before a job starts: `park` when it already started `maxAttempts` times; otherwise this start is
   * recorded. The record cannot be read or written (KV unavailable): the job runs, unrecorded,
   * rather than the pipeline stopping for its bookkeeping.
   */
  async begin(m: JsMsg): Promise<{ park: boolean; attempts: number; revision?: number }> {
    if (m.info.redeliveryCount <= 1) return { park: false, attempts: 1 };
    const key = String(m.seq);
    try {
      const e = await this.kv.getLatest(key);
      const recorded = e && !e.deleted ? Number(Buffer.from(e.value).toString()) || 0 : 0;
      // The unrecorded first delivery is the one more start.
      if (recorded + 1 >= this.maxAttempts)
        return { park: true, attempts: recorded + 1, revision: e?.revision };
      const revision = await this.kv.put(key, Buffer.from(String(recorded + 1)), e?.revision ?? 0);
      return { park: false, attempts: recorded + 2, revision };
    } catch (err) {
      this.log.warn('pipeline job attempts not recorded', { seq: m.seq, error: (err as Error).message });
      return { park: false, attempts: m.info.redeliveryCount };
    }
  }

  /** After the job was acknowledged (or parked): its record goes (the bucket's TTL takes what is missed). */
  end(m: JsMsg, revision: number | undefined): void {
    if (revision === undefined) return;
    this.kv.remove(String(m.seq), revision).catch(() => {});
  }
}
