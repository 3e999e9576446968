import type { Logger } from '../../lib/log.ts';
import { applied, findApplied, replyOf, type Applied } from './applied.ts';
import type { Cell } from './cell.ts';
import type { CellTable } from './cell-table.ts';
import { Committer } from './commit.ts';
import type { Deadlines } from './deadlines.ts';
import type { KvStore } from './kv-store.ts';
import { TurnImpl } from './turn.ts';
import { ActorError, AlreadyApplied, Fenced, type Turn } from './types.ts';
import type { RecordWriter } from './writer.ts';

const DEFAULTS = {
  /** Reloading an actor after a failed write retries from this, doubling up to reloadBackoffMaxMs. */
  reloadBackoffMs: 250,
  reloadBackoffMaxMs: 5000,
} as const;

/** A message waiting in an actor's mailbox, with the caller's promise to settle. */
export interface Queued {
  type: string;
  body: unknown;
  msgId: string | undefined;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

/** What the runner asks of the host (ActorHost) about the shards it serves. */
interface ShardOwner {
  /** The lease guard holds and the shard is this node's: work on it may start or finish. */
  owns(shard: number): boolean;
  /** Asks etcd whether this node still owns a shard (unset without a shard manager). */
  readonly verifyOwnership: ((shard: number) => Promise<boolean>) | undefined;
  /** Ownership is gone: stop the shard's work at once. */
  drop(shard: number): void;
}

interface TurnRunnerOptions {
  owner: ShardOwner;
  cells: CellTable;
  deadlines: Deadlines;
  writer: RecordWriter;
  stores: Map<string, KvStore>;
  log: Logger;
  publishDurable?: (subject: string, data: Uint8Array, msgId: string) => Promise<void>;
  /** Freeze what turns read of their side records (tests: `--debug-freeze-reads`). */
  freezeReads?: boolean;
}

/**
 * Runs an actor's turns on its cell and commits them (docs/architecture.md#atomic-turns): loads the
 * record first, applies the messages, makes the writes durable before anyone hears a reply, and
 * reloads the actor when a write failed.
 */
export class TurnRunner {
  private readonly committer: Committer;
  private readonly debug: boolean;
  private readonly readSide = (
    cell: Cell,
    bucket: string,
    key: string,
    messageId: string | undefined,
  ): unknown => this.committer.readSide(cell, bucket, key, messageId);
  /** Turns committed by this node, for metrics and tests. */
  committedTurns = 0;

  constructor(private readonly opts: TurnRunnerOptions) {
    this.debug = opts.log.enabled('debug');
    this.committer = new Committer(opts.writer, opts.stores, opts.log, opts.freezeReads);
  }

  private assertOwned(shard: number): void {
    if (!this.opts.owner.owns(shard)) throw new Fenced();
  }

  /**
   * Runs the messages queued together: one turn and one commit for all of them. When one of them
   * fails, nothing of the batch is committed and each message gets a turn of its own instead, so a
   * bad message fails alone.
   */
  async runBatch(cell: Cell, batch: Queued[]): Promise<void> {
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

  async turn<R>(
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
      this.opts.cells.evict(cell);
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
      this.opts.deadlines.sync(cell, before, turn.timers);
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
      this.opts.cells.evict(cell);
      throw new ActorError('unavailable', `cannot enqueue: ${(err as Error).message}`);
    }
    this.assertOwned(cell.shard);
  }

  /** Loads (and finishes) the actor's record; a store that cannot answer is a retryable refusal. */
  private async load(cell: Cell): Promise<void> {
    try {
      await this.committer.load(cell);
    } catch (err) {
      this.opts.cells.evict(cell);
      throw new ActorError('unavailable', `actor state cannot be loaded: ${(err as Error).message}`);
    }
    this.opts.deadlines.armMissing(cell);
  }

  /**
   * After a failed write the cached view of an actor cannot be trusted: a compare-and-set lost to
   * another writer (a stale owner's late write, or a new owner if we are the stale one), or a
   * write timed out and may or may not have landed. Ask whether the shard is still ours; if so,
   * reload the actor and re-arm its deadlines from what is really stored, so none is lost.
   */
  private async recover(cell: Cell): Promise<void> {
    this.opts.cells.evict(cell);
    for (let attempt = 0; ; attempt++) {
      if (!this.opts.owner.owns(cell.shard)) return;
      const stillOwner = this.opts.owner.verifyOwnership
        ? await this.opts.owner.verifyOwnership(cell.shard).catch(() => false)
        : true;
      if (!stillOwner) {
        this.opts.owner.drop(cell.shard);
        return;
      }
      const fresh = this.opts.cells.get(cell.behavior, cell.id, cell.shard);
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
}
