import { headers as natsHeaders, type KV, type Msg, type MsgHdrs } from 'nats';
import { parseHeaderBlock, type Headers } from './nats-headers.ts';
import { NoRespondersError } from './request-mux.ts';

// Durable actor state in JetStream KV, with the reads and compare-and-set writes actors decide on
// (docs/architecture.md#actor-state).

/** A compare-and-set write lost: someone else wrote the key since the expected revision. */
export class CasConflictError extends Error {
  constructor(key: string) {
    super(`revision conflict on ${key}`);
    this.name = 'CasConflictError';
  }
}

/** What a bucket needs of its connection (NatsAdapter, which creates the store): raw request/reply. */
interface KvRequester {
  requestRaw(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg>;
  streamBounds(stream: string): Promise<{ first: number; last: number }>;
  readStream(
    stream: string,
    range: { from: number; upTo: number; max: number; timeoutMs: number },
  ): Promise<StreamMsg[] | undefined>;
}

/** A message read back from a stream, with its sequence. */
export interface StreamMsg {
  seq: number;
  subject: string;
  data: Uint8Array;
  header(name: string): string | undefined;
}

export interface KvEntry {
  key: string;
  value: Uint8Array;
  revision: number;
  deleted: boolean;
}

/** An entry as the stream leader holds it, with the headers its writer attached. */
interface KvRecord extends KvEntry {
  headers: Headers;
}

const EXPECTED_LAST_SUBJECT_SEQ = 'Nats-Expected-Last-Subject-Sequence';
const KV_OPERATION = 'KV-Operation';
const WRONG_LAST_SEQUENCE = 10071;
const NO_MESSAGE_FOUND = 10037;
const KV_WRITE_TIMEOUT_MS = 5000;

/** A JetStream KV bucket with compare-and-set writes. Revision 0 means "the key must not exist". */
export class KvStore {
  private readonly stream: string;
  constructor(
    readonly bucket: string,
    private readonly kv: KV,
    private readonly nats: KvRequester,
  ) {
    this.stream = `KV_${bucket}`;
  }

  /** A fast read, possibly served by any replica (direct get): for API reads, never for decisions. */
  async get(key: string): Promise<KvEntry | undefined> {
    const e = await this.kv.get(key);
    if (!e) return undefined;
    return { key, value: e.value, revision: e.revision, deleted: e.operation !== 'PUT' };
  }

  /**
   * The latest entry of `key` as the stream's leader has it, headers included. Actors decide on
   * what they read (a revision to compare-and-set against, the ids of messages already applied), so
   * they read here: a follower answering a direct get may not have the last write yet.
   */
  async getLatest(key: string): Promise<KvRecord | undefined> {
    let reply: Msg;
    try {
      reply = await this.nats.requestRaw(
        `$JS.API.STREAM.MSG.GET.${this.stream}`,
        Buffer.from(JSON.stringify({ last_by_subj: `$KV.${this.bucket}.${key}` })),
        KV_WRITE_TIMEOUT_MS,
      );
    } catch (err) {
      if (err instanceof NoRespondersError)
        throw new Error(`JetStream is not available for bucket ${this.bucket}`);
      throw err;
    }
    const body = JSON.parse(
      Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength).toString('utf8'),
    ) as {
      message?: { seq: number; hdrs?: string; data?: string };
      error?: { err_code?: number; description?: string };
    };
    if (body.error) {
      if (body.error.err_code === NO_MESSAGE_FOUND) return undefined;
      throw new Error(
        `KV read of ${this.bucket}/${key} failed: ${body.error.description ?? 'unknown error'}`,
      );
    }
    const m = body.message!;
    const headers = parseHeaderBlock(m.hdrs);
    const op = headers[KV_OPERATION];
    return {
      key,
      value: m.data ? Buffer.from(m.data, 'base64') : new Uint8Array(0),
      revision: m.seq,
      deleted: op === 'DEL' || op === 'PURGE',
      headers,
    };
  }

  /**
   * Compare-and-set write: a publish on the bucket's subject with the expected last sequence of
   * the key, answered by JetStream's acknowledgement once the write is stored. `headers` travel
   * with the entry (the runtime marks which messages a write applied).
   */
  put(key: string, value: Uint8Array, expectedRevision: number, headers?: Headers): Promise<number> {
    return this.write(key, value, expectedRevision, headers);
  }

  /** Compare-and-set delete: a delete marker; resolves with its revision. */
  remove(key: string, expectedRevision: number, headers?: Headers): Promise<number> {
    return this.write(key, new Uint8Array(0), expectedRevision, { ...headers, [KV_OPERATION]: 'DEL' });
  }

  private async write(
    key: string,
    value: Uint8Array,
    expectedRevision: number,
    extra?: Headers,
  ): Promise<number> {
    const h = natsHeaders();
    h.set(EXPECTED_LAST_SUBJECT_SEQ, String(expectedRevision));
    if (extra) for (const k in extra) h.set(k, extra[k]!);
    let reply: Msg;
    try {
      reply = await this.nats.requestRaw(`$KV.${this.bucket}.${key}`, value, KV_WRITE_TIMEOUT_MS, h);
    } catch (err) {
      if (err instanceof NoRespondersError)
        throw new Error(`JetStream is not available for bucket ${this.bucket}`);
      throw err;
    }
    const ack = JSON.parse(
      Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength).toString('utf8'),
    ) as { seq?: number; error?: { err_code?: number; description?: string } };
    if (ack.error) {
      if (ack.error.err_code === WRONG_LAST_SEQUENCE) throw new CasConflictError(key);
      throw new Error(
        `KV write to ${this.bucket}/${key} failed: ${ack.error.description ?? 'unknown error'}`,
      );
    }
    return ack.seq!;
  }

  /**
   * Follows the whole bucket for read models: every current entry, then every change. Each (re)start
   * of the watch calls `onStart`, then delivers all current entries, then `onReady`: a model can drop
   * what the new pass did not deliver (deleted while the watch was down).
   */
  follow(h: {
    onStart(): void;
    onPut(key: string, value: Uint8Array, revision: number): void;
    onDelete(key: string, revision: number): void;
    onReady(): void;
    onError?(err: Error): void;
  }): { stop(): void } {
    let stopped = false;
    let current: { stop(): void } | undefined;
    const run = async () => {
      while (!stopped) {
        try {
          h.onStart();
          const it = await this.kv.watch({ key: '>', initializedFn: () => h.onReady() });
          current = it;
          for await (const e of it) {
            if (e.operation === 'PUT') h.onPut(e.key, e.value, e.revision);
            else h.onDelete(e.key, e.revision);
          }
        } catch (err) {
          h.onError?.(err as Error);
        }
        if (!stopped) await new Promise((r) => setTimeout(r, 500));
      }
    };
    void run();
    return {
      stop: () => {
        stopped = true;
        current?.stop();
      },
    };
  }

  /**
   * The revisions the bucket holds now: the oldest kept and the latest written. A bucket keeps one
   * entry per key (its latest value or delete marker), so the oldest moves on as keys are rewritten.
   */
  history(): Promise<{ first: number; last: number }> {
    return this.nats.streamBounds(this.stream);
  }

  /**
   * The entries written after revision `after` through `upTo` that the bucket still holds, in
   * revision order: for each key changed since, its latest write (a key written twice since keeps
   * only the second). Undefined when more than `max` entries follow `after`.
   */
  async changesSince(after: number, upTo: number, max: number): Promise<KvEntry[] | undefined> {
    if (upTo <= after) return [];
    const msgs = await this.nats.readStream(this.stream, {
      from: after + 1,
      upTo,
      max,
      timeoutMs: KV_WRITE_TIMEOUT_MS,
    });
    if (!msgs) return undefined;
    const prefix = `$KV.${this.bucket}.`;
    return msgs.map((m) => {
      const op = m.header(KV_OPERATION);
      return {
        key: m.subject.slice(prefix.length),
        value: m.data,
        revision: m.seq,
        deleted: op === 'DEL' || op === 'PURGE',
      };
    });
  }

  /** Every live entry whose key matches `filter` (NATS subject wildcards). */
  async list(filter = '>'): Promise<KvEntry[]> {
    const out: KvEntry[] = [];
    let done!: () => void;
    const initialized = new Promise<void>((resolve) => {
      done = resolve;
    });
    const it = await this.kv.watch({ key: filter, ignoreDeletes: false, initializedFn: () => done() });
    const consume = (async () => {
      for await (const e of it) {
        if (e.operation === 'PUT')
          out.push({ key: e.key, value: e.value, revision: e.revision, deleted: false });
      }
    })();
    await initialized;
    it.stop();
    await consume.catch(() => {});
    return out;
  }
}
