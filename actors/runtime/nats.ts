import {
  connect,
  credsAuthenticator,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
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
import { KvStore, type StreamMsg } from './kv-store.ts';
import { toHdrs, type Headers } from './nats-headers.ts';
import { RequestMux } from './request-mux.ts';
import { workSlices, type Slices } from '../../lib/slices.ts';

// The connection to NATS: core request/reply and pub/sub for the mesh, JetStream streams and
// consumers, and the KV buckets of durable actor state (their reads and writes are kv-store.ts).
// Other modules see typed errors and plain byte payloads.

export interface InboundMsg {
  subject: string;
  data: Uint8Array;
  header(name: string): string | undefined;
  /** Replies when the sender asked for one; false when there is no reply subject. */
  respond(data: Uint8Array, headers?: Headers): boolean;
}

/** How the client proves who it is: a user and password, a token, or a credentials file's content. */
export type NatsAuth = { user: string; pass: string } | { token: string } | { creds: Uint8Array };

interface NatsAdapterOptions {
  /** Without user info: the client ignores credentials written into a URL. */
  servers: string[];
  name: string;
  auth?: NatsAuth;
  /** PEM texts; any of them makes the connection require TLS. */
  tls?: { ca?: string; cert?: string; key?: string };
  /** Connect timeout and the deadline for a server's INFO after reconnecting (2 s beats a frozen peer). */
  timeoutMs?: number;
}

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
  /** Every delivery of this connection, replies included, runs in the process's slices. */
  private readonly slices: Slices = workSlices;
  private reconnecting = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
  ) {
    this.mux = new RequestMux(nc, this.slices);
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
      ...(opts.auth && 'creds' in opts.auth
        ? { authenticator: credsAuthenticator(opts.auth.creds) }
        : opts.auth),
      ...(opts.tls ? { tls: opts.tls } : {}),
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

  /** Request with raw headers, for the KV reads and writes of kv-store.ts. */
  requestRaw(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    return this.mux.request(subject, data, timeoutMs, headers);
  }

  subscribe(
    subject: string,
    onMsg: (m: InboundMsg) => void,
    opts: { queue?: string } = {},
  ): { unsubscribe(): void } {
    // Nothing is delivered once unsubscribed, as without the slices: a shard handed off must not
    // start a turn from a message that was still waiting for its slice.
    let live = true;
    const sub = this.nc.subscribe(subject, {
      queue: opts.queue,
      callback: (err, m) => {
        if (!err)
          this.slices.run(() => {
            if (live) onMsg(new Inbound(m));
          });
      },
    });
    return {
      unsubscribe: () => {
        live = false;
        sub.unsubscribe();
      },
    };
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
   * A stream over the one `subject` that keeps at most `limits` (the oldest messages go first), for
   * what must be kept for a while but cannot be allowed to grow without bound. Created if missing.
   */
  async boundedStream(
    stream: string,
    subject: string,
    limits: { maxMsgs: number; maxBytes: number; maxAgeMs: number; replicas?: number },
  ): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    const exists = () =>
      jsm.streams.info(stream).then(
        () => true,
        () => false,
      );
    if (await exists()) return;
    await jsm.streams
      .add({
        name: stream,
        subjects: [subject],
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        max_msgs: limits.maxMsgs,
        max_bytes: limits.maxBytes,
        max_age: limits.maxAgeMs * 1_000_000,
        storage: StorageType.File,
        num_replicas: limits.replicas ?? 1,
      })
      // Another node may have created it at the same moment.
      .catch(async (err) => {
        if (!(await exists())) throw err;
      });
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

  /**
   * `ttlMs`: entries (delete markers included) are dropped this long after their last write. A bucket
   * that exists already keeps its other settings, but one without a TTL or with a shorter one gets
   * `ttlMs`: entries that must live that long would otherwise go early. A longer TTL is left alone,
   * so nodes asking for different ones end with the longest instead of undoing each other.
   */
  async kv(bucket: string, opts: { replicas?: number; ttlMs?: number } = {}): Promise<KvStore> {
    for (let attempt = 1; ; attempt++) {
      try {
        const kv = await this.js.views.kv(bucket, {
          history: 1,
          replicas: opts.replicas ?? 1,
          storage: StorageType.File,
          allow_direct: true,
          ...(opts.ttlMs ? { ttl: opts.ttlMs } : {}),
        });
        if (opts.ttlMs) await this.raiseTtl(kv, opts.ttlMs);
        return new KvStore(bucket, kv, this);
      } catch (err) {
        // A replicated bucket's creation in a cluster that is still electing can outlast one API call;
        // creating it again is harmless. Any other failure (no JetStream at all) is reported at once.
        if ((err as { code?: string }).code !== 'TIMEOUT' || attempt >= 5) throw err;
      }
    }
  }

  private async raiseTtl(kv: KV, ttlMs: number): Promise<void> {
    const status = await kv.status();
    if (status.ttl !== 0 && status.ttl >= ttlMs) return;
    const jsm = await this.nc.jetstreamManager();
    const { name, duplicate_window } = status.streamInfo.config;
    // JetStream refuses a duplicate window longer than the TTL.
    await jsm.streams.update(name, {
      max_age: nanos(ttlMs),
      duplicate_window: Math.min(duplicate_window, nanos(ttlMs)),
    });
  }

  /** The sequences a stream holds now: its first and its last (an empty stream: last + 1 and last). */
  async streamBounds(stream: string): Promise<{ first: number; last: number }> {
    const jsm = await this.nc.jetstreamManager();
    const { state } = (await jsm.streams.info(stream)) as { state: { first_seq: number; last_seq: number } };
    return { first: state.first_seq, last: state.last_seq };
  }

  /**
   * The messages a stream holds from sequence `from` through `upTo`, in order, through an ordered
   * consumer of its own; undefined when more than `max` wait from `from` on. The caller knows that the
   * stream holds something from `from` on (`streamBounds`): a consumer with nothing to read would wait.
   */
  async readStream(
    stream: string,
    range: { from: number; upTo: number; max: number; timeoutMs: number },
  ): Promise<StreamMsg[] | undefined> {
    const consumer = await this.js.consumers.get(stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: range.from,
    });
    const messages = await consumer.consume({ max_messages: Math.min(range.max + 1, 512) });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      messages.stop();
    }, range.timeoutMs);
    const out: StreamMsg[] = [];
    try {
      for await (const m of messages) {
        if (m.seq > range.upTo) break;
        if (out.length === 0 && m.info.pending + 1 > range.max) return undefined;
        out.push({
          seq: m.seq,
          subject: m.subject,
          data: m.data,
          header: (n) => m.headers?.get(n) || undefined,
        });
        if (m.info.pending === 0 || m.seq >= range.upTo) break;
      }
    } finally {
      clearTimeout(timer);
      messages.stop();
      await consumer.delete().catch(() => {});
    }
    if (timedOut)
      throw new Error(`reading ${stream} from ${range.from} timed out after ${range.timeoutMs} ms`);
    return out;
  }

  /** How many messages a stream holds (a work queue: how many wait or run). */
  async streamDepth(stream: string): Promise<number> {
    const jsm = await this.nc.jetstreamManager();
    return (await jsm.streams.info(stream)).state.messages;
  }

  async close(): Promise<void> {
    this.mux.close();
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}
