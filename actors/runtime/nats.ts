import {
  connect,
  headers as natsHeaders,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type ConsumerConfig,
  type JetStreamClient,
  type KV,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from 'nats';
import { NoRespondersError, RequestMux } from './request-mux.ts';

// The one module that talks to NATS: core request/reply and pub/sub for the mesh, JetStream KV for
// durable actor state. Other modules see typed errors and plain byte payloads.

/** A compare-and-set write lost: someone else wrote the key since the expected revision. */
export class CasConflictError extends Error {
  constructor(key: string) {
    super(`revision conflict on ${key}`);
    this.name = 'CasConflictError';
  }
}

export type Headers = Record<string, string>;

export interface InboundMsg {
  subject: string;
  data: Uint8Array;
  header(name: string): string | undefined;
  /** Replies when the sender asked for one; false when there is no reply subject. */
  respond(data: Uint8Array, headers?: Headers): boolean;
}

interface NatsAdapterOptions {
  servers: string[];
  name: string;
  /** Connect timeout and the deadline for a server's INFO after reconnecting (2 s beats a frozen peer). */
  timeoutMs?: number;
}

const toHdrs = (h?: Headers): MsgHdrs | undefined => {
  if (!h) return undefined;
  const out = natsHeaders();
  for (const k in h) out.set(k, h[k]!);
  return out;
};

/** A received message; methods live on the prototype, not in closures per message. */
class Inbound implements InboundMsg {
  constructor(private readonly m: Msg) {}
  get subject(): string {
    return this.m.subject;
  }
  get data(): Uint8Array {
    return this.m.data;
  }
  header(name: string): string | undefined {
    return this.m.headers ? this.m.headers.get(name) || undefined : undefined;
  }
  respond(data: Uint8Array, h?: Headers): boolean {
    return this.m.respond(data, h ? { headers: toHdrs(h) } : undefined);
  }
}

export class NatsAdapter {
  private readonly mux: RequestMux;
  private reconnecting = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
  ) {
    this.mux = new RequestMux(nc);
  }

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

  get connected(): boolean {
    return !this.nc.isClosed() && !this.reconnecting;
  }

  /** Follows the connection status; the callback hears disconnect/reconnect transitions. */
  watchStatus(onChange: (state: 'disconnected' | 'reconnected') => void): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting') {
          if (!this.reconnecting) {
            this.reconnecting = true;
            onChange('disconnected');
          }
        } else if (s.type === 'reconnect') {
          this.reconnecting = false;
          onChange('reconnected');
        }
      }
    })().catch(() => {});
  }

  publish(subject: string, data: Uint8Array, headers?: Headers): void {
    this.nc.publish(subject, data, headers ? { headers: toHdrs(headers) } : undefined);
  }

  async request(
    subject: string,
    data: Uint8Array,
    opts: { timeoutMs: number; headers?: Headers },
  ): Promise<InboundMsg> {
    return new Inbound(await this.mux.request(subject, data, opts.timeoutMs, toHdrs(opts.headers)));
  }

  /** Request with raw headers, for the KV writes built here. */
  requestRaw(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    return this.mux.request(subject, data, timeoutMs, headers);
  }

  subscribe(
    subject: string,
    onMsg: (m: InboundMsg) => void,
    opts: { queue?: string } = {},
  ): { unsubscribe(): void } {
    const sub = this.nc.subscribe(subject, {
      queue: opts.queue,
      callback: (err, m) => {
        if (!err) onMsg(new Inbound(m));
      },
    });
    return { unsubscribe: () => sub.unsubscribe() };
  }

  /** Round trip to the server: proves the connection is alive, not just open. */
  async ping(timeoutMs = 2000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.nc.flush(),
        new Promise((_, rej) => {
          timer = setTimeout(() => rej(new Error('timeout')), timeoutMs);
        }),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A durable work queue (JetStream, work-queue retention) over `<prefix>.>`: each message is kept
   * until one consumer takes it. Returns a function that appends to `<prefix>.<topic>`.
   */
  async workQueue(
    stream: string,
    prefix: string,
    opts: { replicas?: number } = {},
  ): Promise<(topic: string, data: Uint8Array) => Promise<void>> {
    const jsm = await this.nc.jetstreamManager();
    const exists = await jsm.streams.info(stream).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await jsm.streams
        .add({
          name: stream,
          subjects: [`${prefix}.>`],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          num_replicas: opts.replicas ?? 1,
        })
        // Another node may have created it at the same moment.
        .catch(async (err) => {
          if (
            !(await jsm.streams.info(stream).then(
              () => true,
              () => false,
            ))
          )
            throw err;
        });
    }
    return async (topic, data) => {
      await this.js.publish(`${prefix}.${topic}`, data);
    };
  }

  /**
   * The durable pull consumer `name` on `stream`, created with `config` if it does not exist yet. Every
   * node asks for the same one at start, so one that exists already (another node made it first, or
   * an earlier run did) is used as is, whatever its config.
   */
  async durableConsumer(
    stream: string,
    name: string,
    config: Omit<Partial<ConsumerConfig>, 'durable_name'>,
  ): Promise<Consumer> {
    const jsm = await this.nc.jetstreamManager();
    await jsm.consumers.add(stream, { durable_name: name, ...config }).catch(async (err) => {
      if (
        !(await jsm.consumers.info(stream, name).then(
          () => true,
          () => false,
        ))
      )
        throw err;
    });
    return this.js.consumers.get(stream, name);
  }

  /** Appends to a JetStream stream; a second publish with the same msgId within the stream's duplicate window is dropped. */
  async publishDurable(subject: string, data: Uint8Array, msgId: string): Promise<void> {
    await this.js.publish(subject, data, { msgID: msgId });
  }

  async kv(bucket: string, opts: { replicas?: number } = {}): Promise<KvStore> {
    for (let attempt = 1; ; attempt++) {
      try {
        const kv = await this.js.views.kv(bucket, {
          history: 1,
          replicas: opts.replicas ?? 1,
          storage: StorageType.File,
          allow_direct: true,
        });
        return new KvStore(bucket, kv, this);
      } catch (err) {
        // A replicated bucket's creation in a cluster that is still electing can outlast one API call;
        // creating it again is harmless. Any other failure (no JetStream at all) is reported at once.
        if ((err as { code?: string }).code !== 'TIMEOUT' || attempt >= 5) throw err;
      }
    }
  }

  async close(): Promise<void> {
    this.mux.close();
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}

interface KvEntry {
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

/** `NATS/1.0\r\nName: value\r\n...` as the stream's message API hands headers back (base64). */
function parseHeaderBlock(b64: string | undefined): Headers {
  const out: Headers = {};
  if (!b64) return out;
  const lines = Buffer.from(b64, 'base64').toString('utf8').split('\r\n');
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

/** A JetStream KV bucket with compare-and-set writes. Revision 0 means "the key must not exist". */
export class KvStore {
  private readonly stream: string;
  constructor(
    readonly bucket: string,
    private readonly kv: KV,
    private readonly nats: NatsAdapter,
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
