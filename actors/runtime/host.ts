import { actorHeaders, shardToken, subjects } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import { decodeActorRecord, type Cell } from './cell.ts';
import { CellTable } from './cell-table.ts';
import { Deadlines } from './deadlines.ts';
import { shardOf } from './hash.ts';
import type { KvEntry, KvStore } from './kv-store.ts';
import type { InboundMsg, NatsAdapter } from './nats.ts';
import { encodeReply } from './reply.ts';
import type { ShardHost } from './shards.ts';
import type { TimerEntry } from './timers.ts';
import { TurnRunner, type Queued } from './turn-runner.ts';
import { ActorError, Fenced, type ActorBehavior } from './types.ts';
import { RecordWriter } from './writer.ts';

const DEFAULTS = {
  /** Messages applied in one turn at most; not above SEEN_LIMIT, so a batch's ids all stay in `seen`. */
  maxBatchMessages: 16,
  /** How long a shard handed off may take to finish the turns in flight. */
  handoffDrainMs: 10_000,
  passivateAfterMs: 10 * 60_000,
  /** The sweep for idle actors runs at least this often (every passivateAfterMs when that is shorter). */
  passivateSweepMaxMs: 60_000,
} as const;

interface ActiveShard {
  fence: number;
  unsubscribe(): void;
  acquiredAt: number;
}

interface ActorHostOptions {
  nats: NatsAdapter;
  stores: Map<string, KvStore>;
  // Each behaviour has its own state type; the host only passes states back to the behaviour that made them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  behaviors: ActorBehavior<any>[];
  /** The local lease guard: false means this node must not start or finish any work. */
  guard: () => boolean;
  shardCount: number;
  log: Logger;
  /** Idle actors leave memory after this long (their deadlines stay armed). */
  passivateAfterMs?: number;
  /** Publishes a turn's enqueued message to JetStream (deduplicated by `msgId`); resolves on the stream's ack. */
  publishDurable?: (subject: string, data: Uint8Array, msgId: string) => Promise<void>;
  /** Freeze what turns read of their side records, so a change in place throws (tests). */
  freezeReads?: boolean;
}

/**
 * Hosts the actors of the shards this node owns: one mailbox subscription per shard, turns run one
 * at a time per actor (by TurnRunner, which commits state with compare-and-set before any reply),
 * and the durable timers of the shard kept in a heap.
 */
export class ActorHost implements ShardHost {
  private readonly shards = new Map<number, ActiveShard>();
  private readonly cells = new CellTable();
  private readonly behaviors = new Map<string, ActorBehavior<unknown>>();
  private readonly deadlines: Deadlines;
  /** Made here, not in the runner: the benchmark and the tests read its write counters on the host. */
  private readonly writer: RecordWriter;
  private readonly turns: TurnRunner;
  private readonly sweep: NodeJS.Timeout;
  private readonly debug: boolean;
  /** Asks etcd whether this node still owns a shard (set by the shard manager). */
  verifyOwnership: ((shard: number) => Promise<boolean>) | undefined;

  constructor(private readonly opts: ActorHostOptions) {
    for (const b of opts.behaviors) this.behaviors.set(b.kind, b);
    this.debug = opts.log.enabled('debug');
    this.deadlines = new Deadlines((e) => this.onTimer(e));
    this.writer = new RecordWriter(opts.stores);
    this.turns = new TurnRunner({
      owner: this,
      cells: this.cells,
      deadlines: this.deadlines,
      writer: this.writer,
      stores: opts.stores,
      log: opts.log,
      publishDurable: opts.publishDurable,
      freezeReads: opts.freezeReads,
    });
    const idle = opts.passivateAfterMs ?? DEFAULTS.passivateAfterMs;
    this.sweep = setInterval(() => this.cells.passivate(idle), Math.min(idle, DEFAULTS.passivateSweepMaxMs));
    this.sweep.unref();
  }

  /** Turns committed by this node, for metrics and tests. */
  get committedTurns(): number {
    return this.turns.committedTurns;
  }
  get ownedCount(): number {
    return this.shards.size;
  }
  get actorCount(): number {
    return this.cells.size;
  }
  get timerCount(): number {
    return this.deadlines.size;
  }
  mailboxDepth(): number {
    return this.cells.mailboxDepth();
  }

  /** The lease guard holds and `shard` is active here: its work may start or finish. */
  owns(shard: number): boolean {
    return this.opts.guard() && this.shards.has(shard);
  }

  async activate(shard: number, fence: number): Promise<void> {
    const acquiredAt = Date.now();
    // Every bucket is read before any deadline is armed: a deadline already due fires on the next
    // tick, and one armed while a later bucket is still being read would find the shard not yet
    // active and be dropped (a schedule's tick was lost that way once a third kind was added).
    const listed: Array<{ behavior: ActorBehavior<unknown>; entries: KvEntry[] }> = [];
    for (const b of this.behaviors.values())
      listed.push({ behavior: b, entries: await this.store(b.bucket).list(`${shardToken(shard)}.>`) });
    if (!this.opts.guard()) throw new Fenced();
    const sub = this.opts.nats.subscribe(subjects.actorShard(shard), (m) => this.onMessage(shard, m));
    this.shards.set(shard, { fence, unsubscribe: sub.unsubscribe, acquiredAt });
    // Re-armed in the same tick as the shard became active, before any message of it is taken.
    for (const { behavior, entries } of listed) {
      for (const e of entries) {
        const record = decodeActorRecord(e.value);
        // An ended actor's record (kept for its `seen`) has nothing to arm.
        if (
          !record ||
          (record.state === undefined && !record.intent && Object.keys(record.timers).length === 0)
        )
          continue;
        const cell = this.cells.get(behavior, record.id, shard);
        // A record holding an intent is loaded by the actor's first turn, which finishes the intent.
        if (!cell.loaded && !record.intent) cell.adopt(record, e.revision);
        for (const [name, spec] of Object.entries(record.timers))
          this.deadlines.arm(cell, name, spec, acquiredAt);
      }
    }
    if (this.debug) this.opts.log.debug('shard activated', { shard, fence, timers: this.deadlines.size });
  }

  async deactivate(shard: number): Promise<void> {
    const active = this.shards.get(shard);
    if (!active) return;
    active.unsubscribe();
    this.deadlines.dropShard(shard);
    const cells = this.cells.ofShard(shard);
    // Let turns already in the mailboxes finish (their writes land before we release the key).
    await Promise.race([
      Promise.all(cells.map((c) => c.mailbox.idle())),
      new Promise((r) => setTimeout(r, DEFAULTS.handoffDrainMs)),
    ]);
    this.shards.delete(shard);
    this.cells.forget(cells);
  }

  drop(shard: number): void {
    const active = this.shards.get(shard);
    if (!active) return;
    this.shards.delete(shard);
    active.unsubscribe();
    this.deadlines.dropShard(shard);
    this.cells.dropShard(shard);
  }

  /**
   * Delivers a message to an actor this node owns without a trip through NATS, with the same
   * ordering, dedupe and fencing as a mailbox message. Undefined when the actor lives elsewhere.
   */
  deliverLocal(
    kind: string,
    id: string,
    type: string,
    body: unknown,
    msgId: string | undefined,
  ): Promise<unknown> | undefined {
    const shard = shardOf(kind, id, this.opts.shardCount);
    if (!this.owns(shard)) return undefined;
    const behavior = this.behaviors.get(kind);
    if (!behavior) return undefined;
    return this.dispatch(this.cells.get(behavior, id, shard), type, body, msgId);
  }

  private dispatch(cell: Cell, type: string, body: unknown, msgId: string | undefined): Promise<unknown> {
    const running = msgId ? cell.inflight.get(msgId) : undefined;
    if (running) return running;
    const result = new Promise<unknown>((resolve, reject) => {
      const message: Queued = { type, body, msgId, resolve, reject };
      // Messages that arrive while the actor is busy wait together and are applied in one turn.
      const open = cell.openBatch;
      if (open && open.length < DEFAULTS.maxBatchMessages) {
        open.push(message);
        return;
      }
      const batch: Queued[] = [message];
      cell.openBatch = batch;
      void cell.mailbox.post(async () => {
        if (cell.openBatch === batch) cell.openBatch = undefined;
        // The cell was dropped (a failed commit) while these waited: they go to the actor's
        // current cell, which reads the store afresh, instead of running on a stale copy.
        if (this.cells.evicted(cell)) {
          if (!this.owns(cell.shard)) {
            for (const m of batch) m.reject(new Fenced());
            return;
          }
          for (const m of batch)
            this.dispatch(this.cells.get(cell.behavior, cell.id, cell.shard), m.type, m.body, m.msgId).then(
              m.resolve,
              m.reject,
            );
          return;
        }
        await this.turns.runBatch(cell, batch);
      });
    });
    if (msgId) {
      cell.inflight.set(msgId, result);
      void result.then(
        () => cell.inflight.delete(msgId),
        () => cell.inflight.delete(msgId),
      );
    }
    return result;
  }

  private onMessage(shard: number, m: InboundMsg): void {
    if (!this.owns(shard)) return; // a stale owner stays silent
    const kind = m.header(actorHeaders.kind) ?? '';
    const id = m.header(actorHeaders.id) ?? '';
    const behavior = this.behaviors.get(kind);
    if (!behavior) {
      m.respond(encodeReply({ error: new ActorError('invalid', `unknown actor kind "${kind}"`) }));
      return;
    }
    if (!id || shardOf(kind, id, this.opts.shardCount) !== shard) {
      m.respond(
        encodeReply({
          error: new ActorError('invalid', `actor ${kind}/${id} does not live in shard ${shard}`),
        }),
      );
      return;
    }
    let body: unknown;
    try {
      body = m.data.length
        ? JSON.parse(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength).toString('utf8'))
        : undefined;
    } catch {
      m.respond(encodeReply({ error: new ActorError('invalid', 'message body is not JSON') }));
      return;
    }

    this.dispatch(
      this.cells.get(behavior, id, shard),
      m.header(actorHeaders.type) ?? '',
      body,
      m.header(actorHeaders.msgId),
    ).then(
      (value) => m.respond(encodeReply({ value })),
      (err: unknown) => {
        if (err instanceof Fenced) return;
        if (err instanceof ActorError) {
          m.respond(encodeReply({ error: err }));
          return;
        }
        this.opts.log.error('actor turn failed', { kind, id, error: (err as Error).message });
        m.respond(encodeReply({ error: new ActorError('internal', (err as Error).message) }));
      },
    );
  }

  private onTimer(e: TimerEntry): void {
    if (!this.owns(e.shard)) return;
    const behavior = this.behaviors.get(e.kind);
    if (!behavior) return;
    const cell = this.cells.get(behavior, e.id, e.shard);
    cell.openBatch = undefined; // messages arriving from now on run after the deadline, not before
    void cell.mailbox
      .post(() =>
        this.cells.evicted(cell)
          ? Promise.resolve(this.onTimer(e))
          : this.turns.turn(cell, undefined, async (t) => {
              // A newer deadline replaced this one after it was queued: nothing to do.
              if (t.timer(e.name)?.at !== e.at) return;
              t.clearTimer(e.name);
              if (this.debug)
                this.opts.log.debug('deadline fired', {
                  actor: `${e.kind}/${e.id}`,
                  timer: e.name,
                  at: e.at,
                  late_ms: Date.now() - e.at,
                });
              await behavior.fire(t, e.name, e.at);
            }),
      )
      .catch((err) => {
        if (!(err instanceof Fenced))
          this.opts.log.error('timer turn failed', {
            actor: `${e.kind}/${e.id}`,
            timer: e.name,
            error: (err as Error).message,
          });
      });
  }

  private store(bucket: string): KvStore {
    const s = this.opts.stores.get(bucket);
    if (!s) throw new Error(`no KV bucket ${bucket}`);
    return s;
  }

  async stop(): Promise<void> {
    clearInterval(this.sweep);
    for (const s of [...this.shards.keys()]) this.drop(s);
    this.deadlines.clear();
  }
}
