import { actorHeaders, shardToken, subjects } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import { applied, findApplied, replyOf, type Applied } from './applied.ts';
import { decodeActorRecord, type Cell } from './cell.ts';
import { CellTable } from './cell-table.ts';
import { Committer } from './commit.ts';
import { Deadlines } from './deadlines.ts';
import { shardOf } from './hash.ts';
import type { KvStore } from './kv-store.ts';
import type { InboundMsg, NatsAdapter } from './nats.ts';
import { encodeReply } from './reply.ts';
import type { ShardHost } from './shards.ts';
import type { TimerEntry } from './timers.ts';
import { TurnImpl } from './turn.ts';
import { ActorError, AlreadyApplied, Fenced, type ActorBehavior, type Turn } from './types.ts';
import { RecordWriter } from './writer.ts';

const DEFAULTS = {
  /** Messages applied in one turn at most; not above SEEN_LIMIT, so a batch's ids all stay in `seen`. */
  maxBatchMessages: 16,
  /** How long a shard handed off may take to finish the turns in flight. */
  handoffDrainMs: 10_000,
  passivateAfterMs: 10 * 60_000,
  /** The sweep for idle actors runs at least this often (every passivateAfterMs when that is shorter). */
  passivateSweepMaxMs: 60_000,
  /** Reloading an actor after a failed write retries from this, doubling up to reloadBackoffMaxMs. */
  reloadBackoffMs: 250,
  reloadBackoffMaxMs: 5000,
} as const;

interface Queued {
  type: string;
  body: unknown;
  msgId: string | undefined;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

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
}

/**
 * Hosts the actors of the shards this node owns: one mailbox subscription per shard, turns run one
 * at a time per actor, state committed with compare-and-set before any reply, and the durable
 * timers of the shard kept in a heap.
 */
export class ActorHost implements ShardHost {
  private readonly shards = new Map<number, ActiveShard>();
  private readonly cells = new CellTable();
  private readonly behaviors = new Map<string, ActorBehavior<unknown>>();
  private readonly deadlines: Deadlines;
  private readonly writer: RecordWriter;
  private readonly committer: Committer;
  private readonly sweep: NodeJS.Timeout;
  private readonly debug: boolean;
  private readonly readSide = (
    cell: Cell,
    bucket: string,
    key: string,
    messageId: string | undefined,
  ): unknown => this.committer.readSide(cell, bucket, key, messageId);
  /** Turns committed by this node, for metrics and tests. */
  committedTurns = 0;
  /** Asks etcd whether this node still owns a shard (set by the shard manager). */
  verifyOwnership: ((shard: number) => Promise<boolean>) | undefined;

  constructor(private readonly opts: ActorHostOptions) {
    for (const b of opts.behaviors) this.behaviors.set(b.kind, b);
    this.debug = opts.log.enabled('debug');
    this.deadlines = new Deadlines((e) => this.onTimer(e));
    this.writer = new RecordWriter(opts.stores);
    this.committer = new Committer(this.writer, opts.stores, opts.log);
    const idle = opts.passivateAfterMs ?? DEFAULTS.passivateAfterMs;
    this.sweep = setInterval(() => this.cells.passivate(idle), Math.min(idle, DEFAULTS.passivateSweepMaxMs));
    this.sweep.unref();
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

  async activate(shard: number, fence: number): Promise<void> {
    const acquiredAt = Date.now();
    // Re-arm every deadline of the shard from its records before taking messages.
    for (const b of this.behaviors.values()) {
      for (const e of await this.store(b.bucket).list(`${shardToken(shard)}.>`)) {
        const record = decodeActorRecord(e.value);
        // An ended actor's record (kept for its `seen`) has nothing to arm.
        if (
          !record ||
          (record.state === undefined && !record.intent && Object.keys(record.timers).length === 0)
        )
          continue;
        const cell = this.cells.get(b, record.id, shard);
        // A record holding an intent is loaded by the actor's first turn, which finishes the intent.
        if (!cell.loaded && !record.intent) cell.adopt(record, e.revision);
        for (const [name, spec] of Object.entries(record.timers))
          this.deadlines.arm(cell, name, spec, acquiredAt);
      }
    }
    if (!this.opts.guard()) throw new Fenced();
    const sub = this.opts.nats.subscribe(subjects.actorShard(shard), (m) => this.onMessage(shard, m));
    this.shards.set(shard, { fence, unsubscribe: sub.unsubscribe, acquiredAt });
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
    if (!this.opts.guard() || !this.shards.has(shard)) return undefined;
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
          if (!this.opts.guard() || !this.shards.has(cell.shard)) {
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
        await this.runBatch(cell, batch);
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
    if (!this.opts.guard() || !this.shards.has(shard)) return; // a stale owner stays silent
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
    if (!this.opts.guard() || !this.shards.has(e.shard)) return;
    const behavior = this.behaviors.get(e.kind);
    if (!behavior) return;
    const cell = this.cells.get(behavior, e.id, e.shard);
    cell.openBatch = undefined; // messages arriving from now on run after the deadline, not before
    void cell.mailbox
      .post(() =>
        this.cells.evicted(cell)
          ? Promise.resolve(this.onTimer(e))
          : this.turn(cell, undefined, async (t) => {
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

  private assertOwned(shard: number): void {
    if (!this.opts.guard() || !this.shards.has(shard)) throw new Fenced();
  }

  /**
   * Runs the messages queued together: one turn and one commit for all of them. When one of them
   * fails, nothing of the batch is committed and each message gets a turn of its own instead, so a
   * bad message fails alone.
   */
  private async runBatch(cell: Cell, batch: Queued[]): Promise<void> {
    if (batch.length > 1) {
      let results: unknown[] | undefined;
      try {
        results = await this.turnMany(cell, batch);
      } catch (err) {
        for (const m of batch) m.reject(err);
        return;
      }
      if (results) {
        batch.forEach((m, i) => m.resolve(results![i]));
        return;
      }
    }
    for (const m of batch) {
      try {
        m.resolve(await this.turn(cell, m.msgId, (t) => cell.behavior.receive(t, m.type, m.body)));
      } catch (err) {
        m.reject(err);
      }
    }
  }

  /** Several messages in one turn; undefined (nothing committed) when one of them throws. */
  private async turnMany(cell: Cell, batch: Queued[]): Promise<unknown[] | undefined> {
    this.assertOwned(cell.shard);
    cell.lastUsed = Date.now();
    if (!cell.loaded) await this.load(cell);
    const turn = new TurnImpl(cell, this.readSide, this.opts.log);
    const results: unknown[] = [];
    const done: Applied[] = [];
    for (const m of batch) {
      const dup = findApplied(cell.seen, m.msgId);
      if (dup) {
        results.push(replyOf(dup));
        continue;
      }
      turn.messageId = m.msgId;
      let result: unknown;
      try {
        result = await cell.behavior.receive(turn, m.type, m.body);
      } catch {
        return undefined;
      }
      results.push(result);
      if (m.msgId) done.push(applied(m.msgId, result));
    }
    await this.commit(cell, turn, done, batch.length);
    return results;
  }

  private async turn<R>(
    cell: Cell,
    msgId: string | undefined,
    body: (t: Turn<unknown>) => Promise<R>,
  ): Promise<R | unknown> {
    this.assertOwned(cell.shard);
    cell.lastUsed = Date.now();
    if (!cell.loaded) await this.load(cell);
    const dup = findApplied(cell.seen, msgId);
    if (dup) return replyOf(dup);

    const turn = new TurnImpl(cell, this.readSide, this.opts.log);
    turn.messageId = msgId;
    let result: R;
    try {
      result = await body(turn);
    } catch (err) {
      // A retry of a message that already wrote what it read: answered as it was the first time.
      if (err instanceof AlreadyApplied) return err.reply;
      // Turns work in place: whatever the actor touched before failing is thrown away with the cell.
      this.cells.evict(cell);
      throw err;
    }
    await this.commit(cell, turn, msgId ? [applied(msgId, result)] : [], 1);
    return result;
  }

  /**
   * Makes a turn durable (see Committer) and only then adopts it. A failed write reloads the actor
   * and answers `unavailable`, so no reply claims what may not be stored and the sender retries
   * with the same message id; a node that lost the shard meanwhile stays silent.
   */
  private async commit(cell: Cell, turn: TurnImpl, done: Applied[], messages: number): Promise<void> {
    this.assertOwned(cell.shard);

    // State is replaced, never mutated in place (see Turn.state): the same reference means no change,
    // and only a new one is serialized (and compared, since an equal copy needs no write either).
    const stateJson = turn.state === cell.state ? cell.stateJson : JSON.stringify(turn.state ?? null);
    const recordChanged = turn.timersChanged || stateJson !== cell.stateJson;
    if (turn.queued.length > 0) await this.publishQueued(cell, turn);
    let seen: Applied[];
    try {
      seen = await this.committer.persist(cell, turn, stateJson, recordChanged, done);
    } catch (err) {
      this.opts.log.warn('state write failed; reloading the actor', {
        actor: `${cell.behavior.kind}/${cell.id}`,
        error: (err as Error).message,
      });
      void this.recover(cell);
      this.assertOwned(cell.shard);
      throw new ActorError('unavailable', `not stored: ${(err as Error).message}`);
    }
    // A node frozen during the write learns here that its lease ran out: the write may have
    // landed (the new owner will see it), but we must not claim it with a reply.
    this.assertOwned(cell.shard);
    cell.seen = seen;
    if (recordChanged) {
      const before = cell.timers;
      cell.state = turn.state;
      cell.stateJson = stateJson;
      cell.timers = turn.timers;
      this.deadlines.sync(cell, before, turn.timers);
    }
    this.committedTurns += messages;
    for (const fn of turn.effects) {
      // An effect's failure is the effect's: the turn is committed and its reply stands.
      void (async () => fn())().catch((err) =>
        this.opts.log.error('after-commit effect failed', {
          actor: `${cell.behavior.kind}/${cell.id}`,
          error: (err as Error).message,
        }),
      );
    }
    if (this.debug)
      this.opts.log.debug('turn committed', {
        actor: `${cell.behavior.kind}/${cell.id}`,
        shard: cell.shard,
        msg_id: done.length === 1 ? done[0]![0] : undefined,
        messages,
        writes: turn.sideWrites.size + (recordChanged ? 1 : 0),
      });
  }

  /**
   * The turn's messages go out before its writes: a crash in between leaves a message whose turn is
   * retried (and deduplicated by msgId), never a stored change whose message was lost.
   */
  private async publishQueued(cell: Cell, turn: TurnImpl): Promise<void> {
    const publish = this.opts.publishDurable;
    if (!publish) throw new ActorError('internal', 'this node cannot enqueue messages');
    try {
      await Promise.all(turn.queued.map((q) => publish(q.subject, Buffer.from(q.data), q.msgId)));
    } catch (err) {
      this.cells.evict(cell);
      throw new ActorError('unavailable', `cannot enqueue: ${(err as Error).message}`);
    }
    this.assertOwned(cell.shard);
  }

  /** Loads (and finishes) the actor's record; a store that cannot answer is a retryable refusal. */
  private async load(cell: Cell): Promise<void> {
    try {
      await this.committer.load(cell);
    } catch (err) {
      this.cells.evict(cell);
      throw new ActorError('unavailable', `actor state cannot be loaded: ${(err as Error).message}`);
    }
    this.deadlines.armMissing(cell);
  }

  /**
   * After a failed write the cached view of an actor cannot be trusted: a compare-and-set lost to
   * another writer (a stale owner's late write, or a new owner if we are the stale one), or a
   * write timed out and may or may not have landed. Ask whether the shard is still ours; if so,
   * reload the actor and re-arm its deadlines from what is really stored, so none is lost.
   */
  private async recover(cell: Cell): Promise<void> {
    this.cells.evict(cell);
    for (let attempt = 0; ; attempt++) {
      if (!this.opts.guard() || !this.shards.has(cell.shard)) return;
      const stillOwner = this.verifyOwnership
        ? await this.verifyOwnership(cell.shard).catch(() => false)
        : true;
      if (!stillOwner) {
        this.drop(cell.shard);
        return;
      }
      const fresh = this.cells.get(cell.behavior, cell.id, cell.shard);
      try {
        await fresh.mailbox.post(async () => {
          if (!fresh.loaded) await this.load(fresh);
        });
        return;
      } catch (err) {
        // Keep trying while the store is away: the record may hold a decided turn whose side writes
        // and deadlines nobody else would finish until the actor's next message.
        if (attempt === 0)
          this.opts.log.warn('reloading an actor failed; retrying', {
            actor: `${cell.behavior.kind}/${cell.id}`,
            error: (err as Error).message,
          });
        await new Promise((r) =>
          setTimeout(
            r,
            Math.min(DEFAULTS.reloadBackoffMaxMs, DEFAULTS.reloadBackoffMs * 2 ** attempt),
          ).unref(),
        );
      }
    }
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
