import {
  connect, headers as natsHeaders, ErrorCode, NatsError, StorageType,
  type JetStreamClient, type KV, type Msg, type MsgHdrs, type NatsConnection, type Subscription,
} from 'nats';

// The one module that talks to NATS: core request/reply and pub/sub for the mesh, JetStream KV for
// durable actor state. Other modules see typed errors and plain byte payloads.

export class NoRespondersError extends Error { constructor(subject: string) { super(`no responders on ${subject}`); this.name = 'NoRespondersError'; } }
export class RequestTimeoutError extends Error { constructor(subject: string) { super(`request timed out on ${subject}`); this.name = 'RequestTimeoutError'; } }
/** A compare-and-set write lost: someone else wrote the key since the expected revision. */
export class CasConflictError extends Error { constructor(key: string) { super(`revision conflict on ${key}`); this.name = 'CasConflictError'; } }

export type Headers = Record<string, string>;

export interface InboundMsg {
  subject: string;
  data: Uint8Array;
  header(name: string): string | undefined;
  /** Replies when the sender asked for one; false when there is no reply subject. */
  respond(data: Uint8Array, headers?: Headers): boolean;
}

export interface NatsAdapterOptions {
  servers: string[];
  name: string;
  /** Connect timeout and the deadline for a server's INFO after reconnecting (2 s beats a frozen peer). */
  timeoutMs?: number;
}

const toHdrs = (h?: Headers): MsgHdrs | undefined => {
  if (!h) return undefined;
  const out = natsHeaders();
  for (const [k, v] of Object.entries(h)) out.set(k, v);
  return out;
};

const wrap = (m: Msg): InboundMsg => ({
  subject: m.subject,
  data: m.data,
  header: (name) => (m.headers ? m.headers.get(name) || undefined : undefined),
  respond: (data, h) => m.respond(data, { headers: toHdrs(h) }),
});

export class NatsAdapter {
  private constructor(readonly nc: NatsConnection, readonly js: JetStreamClient) {}

  static async connect(opts: NatsAdapterOptions): Promise<NatsAdapter> {
    const nc = await connect({
      servers: opts.servers,
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 3000,
      maxPingOut: 2,
      timeout: opts.timeoutMs ?? 2000,
      noAsyncTraces: true,
    });
    return new NatsAdapter(nc, nc.jetstream({ timeout: 5000 }));
  }

  get connected(): boolean { return !this.nc.isClosed() && this.nc.info !== undefined && !this.reconnecting; }
  private reconnecting = false;

  /** Follows the connection status; the callback hears disconnect/reconnect transitions. */
  watchStatus(onChange: (state: 'disconnected' | 'reconnected') => void): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting') { if (!this.reconnecting) { this.reconnecting = true; onChange('disconnected'); } }
        else if (s.type === 'reconnect') { this.reconnecting = false; onChange('reconnected'); }
      }
    })().catch(() => {});
  }

  publish(subject: string, data: Uint8Array, headers?: Headers): void {
    this.nc.publish(subject, data, { headers: toHdrs(headers) });
  }

  async request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: Headers }): Promise<InboundMsg> {
    try {
      const m = await this.nc.request(subject, data, { timeout: opts.timeoutMs, headers: toHdrs(opts.headers) });
      return wrap(m);
    } catch (err) {
      if (err instanceof NatsError && err.code === ErrorCode.NoResponders) throw new NoRespondersError(subject);
      if (err instanceof NatsError && err.code === ErrorCode.Timeout) throw new RequestTimeoutError(subject);
      throw err;
    }
  }

  subscribe(subject: string, onMsg: (m: InboundMsg) => void, opts: { queue?: string } = {}): { unsubscribe(): void } {
    const sub: Subscription = this.nc.subscribe(subject, {
      queue: opts.queue,
      callback: (err, m) => { if (!err) onMsg(wrap(m)); },
    });
    return { unsubscribe: () => sub.unsubscribe() };
  }

  /** Round trip to the server: proves the connection is alive, not just open. */
  async ping(timeoutMs = 2000): Promise<boolean> {
    try {
      await Promise.race([this.nc.flush(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), timeoutMs))]);
      return true;
    } catch { return false; }
  }

  async kv(bucket: string, opts: { replicas?: number } = {}): Promise<KvStore> {
    const kv = await this.js.views.kv(bucket, { history: 1, replicas: opts.replicas ?? 1, storage: StorageType.File, allow_direct: true });
    return new KvStore(bucket, kv);
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}

export interface KvEntry { key: string; value: Uint8Array; revision: number; deleted: boolean }

/** A JetStream KV bucket with compare-and-set writes. Revision 0 means "the key must not exist". */
export class KvStore {
  constructor(readonly bucket: string, private readonly kv: KV) {}

  async get(key: string): Promise<KvEntry | undefined> {
    const e = await this.kv.get(key);
    if (!e) return undefined;
    return { key, value: e.value, revision: e.revision, deleted: e.operation !== 'PUT' };
  }

  async put(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    try {
      return await this.kv.put(key, value, { previousSeq: expectedRevision });
    } catch (err) {
      if (isWrongLastSequence(err)) throw new CasConflictError(key);
      throw err;
    }
  }

  async delete(key: string, expectedRevision?: number): Promise<void> {
    try {
      await this.kv.delete(key, expectedRevision === undefined ? undefined : { previousSeq: expectedRevision });
    } catch (err) {
      if (isWrongLastSequence(err)) throw new CasConflictError(key);
      throw err;
    }
  }

  /** Every live entry whose key matches `filter` (NATS subject wildcards). */
  async list(filter = '>'): Promise<KvEntry[]> {
    const out: KvEntry[] = [];
    let done!: () => void;
    const initialized = new Promise<void>((resolve) => { done = resolve; });
    const it = await this.kv.watch({ key: filter, ignoreDeletes: false, initializedFn: () => done() });
    const consume = (async () => {
      for await (const e of it) {
        if (e.operation === 'PUT') out.push({ key: e.key, value: e.value, revision: e.revision, deleted: false });
      }
    })();
    await initialized;
    it.stop();
    await consume.catch(() => {});
    return out;
  }
}

function isWrongLastSequence(err: unknown): boolean {
  const e = err as NatsError;
  return e?.api_error?.err_code === 10071 || /wrong last sequence/i.test(e?.message ?? '');
}
