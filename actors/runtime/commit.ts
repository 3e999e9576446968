import type { Logger } from '../../lib/log.ts';
import {
  APPLIED_HEADER,
  BASE_HEADER,
  SEEN_LIMIT,
  SIDE_APPLIED_LIMIT,
  appendApplied,
  decodeAppliedList,
  encodeAppliedList,
  findApplied,
  replyOf,
  type Applied,
} from './applied.ts';
import {
  decodeActorRecord,
  encodeActorRecord,
  sideKey,
  splitSideKey,
  type Cell,
  type SideRecord,
} from './cell.ts';
import { CasConflictError, type KvStore } from './kv-store.ts';
import type { Headers } from './nats-headers.ts';
import { deepFreeze } from './freeze.ts';
import { TurnImpl } from './turn.ts';
import { ActorError, AlreadyApplied, type ActorRecord } from './types.ts';
import type { RecordWriter } from './writer.ts';

function valueFor(s: SideRecord, messageId: string | undefined, freeze: boolean): unknown {
  const hit = findApplied(s.applied, messageId);
  if (hit) throw new AlreadyApplied(replyOf(hit));
  if (!s.present) return undefined;
  if (s.text !== undefined) {
    s.value = JSON.parse(s.text);
    s.text = undefined;
  }
  return freeze ? deepFreeze(s.value) : s.value;
}

/** The turn's messages that wrote side record `sk`, with their replies. */
function appliedBy(turn: TurnImpl, sk: string, done: Applied[]): Applied[] {
  const ids = turn.writers.get(sk);
  if (!ids) return [];
  const out: Applied[] = [];
  for (const id of ids) out.push(findApplied(done, id) ?? [id]);
  return out;
}

/**
 * Makes turns durable so that a message is applied exactly once whatever fails in between
 * (docs/architecture.md, "Atomic turns"):
 * - a turn with one write (its record, or one side record) makes it with compare-and-set, and the
 *   write names the messages it applied (`seen` in the record, a header on a side record);
 * - a turn with more writes first writes its record holding the side writes as an intent, which
 *   decides the turn, then makes the side writes; whoever loads the record next finishes an intent
 *   left half done before the actor takes any message.
 */
export class Committer {
  constructor(
    private readonly writer: RecordWriter,
    private readonly stores: Map<string, KvStore>,
    private readonly log: Logger,
    /** Freeze what turns read (`--debug-freeze-reads`): a change in place then throws. */
    private readonly freezeReads = false,
  ) {}

  /**
   * Writes what the turn changed. `done` are the turn's messages with their replies. Resolves with
   * the record's `seen` as stored; throws when a write failed (the cell must then be reloaded).
   */
  async persist(
    cell: Cell,
    turn: TurnImpl,
    stateJson: string,
    recordChanged: boolean,
    done: Applied[],
  ): Promise<Applied[]> {
    if (turn.sideWrites.size === 0 && !recordChanged) return cell.seen;
    if (turn.sideWrites.size === 1 && !recordChanged) {
      // The common turn (a result of a known check): one write, no copies of anything.
      for (const [sk, w] of turn.sideWrites)
        await this.writeSide(cell, sk, TurnImpl.textOf(w), appliedBy(turn, sk, done), cell.revision, w.value);
      return cell.seen;
    }
    const sides = [...turn.sideWrites];
    const seen = appendApplied(cell.seen, done, SEEN_LIMIT);
    const bucket = cell.behavior.bucket;
    if (sides.length === 0) {
      cell.revision = await this.writer.put(
        bucket,
        cell.key,
        encodeActorRecord(cell.id, stateJson, turn.timers, seen),
        cell.revision,
      );
      return seen;
    }
    // The revisions the side writes replace go into the intent: a replay compares against them.
    const prior = await Promise.all(sides.map(([sk]) => this.side(cell, sk)));
    const writes = sides.map(([sk, w], i) => {
      const [b, key] = splitSideKey(sk);
      return {
        bucket: b,
        key,
        prev: prior[i]!.revision,
        ids: turn.writers.get(sk) ?? [],
        json: TurnImpl.textOf(w),
      };
    });
    const rev = await this.writer.put(
      bucket,
      cell.key,
      encodeActorRecord(cell.id, stateJson, turn.timers, seen, { writes }),
      cell.revision,
    );
    cell.revision = rev;
    await Promise.all(
      sides.map(([sk, w], i) =>
        this.writeSide(cell, sk, writes[i]!.json, appliedBy(turn, sk, done), rev, w.value),
      ),
    );
    return seen;
  }

  /**
   * A side record for a turn: a message that wrote it before is answered as it was then. Answers
   * at once (no promise) when the record is cached, as it is for every turn but an actor's first.
   */
  readSide(cell: Cell, bucket: string, key: string, messageId: string | undefined): unknown {
    const sk = sideKey(bucket, key);
    const cached = cell.side.get(sk);
    const freeze = this.freezeReads;
    return cached
      ? valueFor(cached, messageId, freeze)
      : this.side(cell, sk).then((s) => valueFor(s, messageId, freeze));
  }

  /** Loads the actor's record from the stream's leader, finishing the intent it may hold first. */
  async load(cell: Cell): Promise<void> {
    const e = await this.store(cell.behavior.bucket).getLatest(cell.key);
    let record = e && !e.deleted ? decodeActorRecord(e.value) : undefined;
    let revision = e?.revision ?? 0;
    if (record?.intent) ({ record, revision } = await this.replay(cell, record, revision));
    cell.adopt(record, revision);
  }

  /**
   * Finishes the intent of the record at revision `rev`. A side record already written by it (or
   * by a later turn, which ran after it was finished) carries a base at or past `rev`; one still at
   * the revision the intent replaces is written now; one at any other revision was written by
   * another owner after the intent was decided (a stale owner racing a new one), so the intent's
   * turn never completed and was never acknowledged: its messages are forgotten, to be applied
   * again when their senders retry.
   */
  private async replay(
    cell: Cell,
    record: ActorRecord<unknown>,
    rev: number,
  ): Promise<{ record: ActorRecord<unknown>; revision: number }> {
    const intent = record.intent!;
    const byId = new Map(record.seen.map((a) => [a[0], a]));
    let conflicted = false;
    for (const w of intent.writes) {
      const sk = sideKey(w.bucket, w.key);
      for (let attempt = 0; ; attempt++) {
        cell.side.delete(sk);
        const cur = await this.side(cell, sk);
        if (cur.base >= rev) break;
        if (cur.revision !== w.prev) {
          conflicted = true;
          break;
        }
        try {
          await this.writeSide(
            cell,
            sk,
            w.json,
            w.ids.map((id) => byId.get(id) ?? [id]),
            rev,
          );
          break;
        } catch (err) {
          if (!(err instanceof CasConflictError) || attempt >= 2) throw err;
        }
      }
    }
    if (!conflicted) {
      this.log.debug('turn intent replayed', {
        actor: `${cell.behavior.kind}/${cell.id}`,
        writes: intent.writes.length,
      });
      return { record: { ...record, intent: undefined }, revision: rev };
    }
    const forgotten = new Set(intent.writes.flatMap((w) => w.ids));
    const seen = record.seen.filter((a) => !forgotten.has(a[0]));
    const revision = await this.writer.put(
      cell.behavior.bucket,
      cell.key,
      encodeActorRecord(record.id, JSON.stringify(record.state ?? null), record.timers, seen),
      rev,
    );
    this.log.warn('a turn lost its side writes to another writer; its messages will be applied again', {
      actor: `${cell.behavior.kind}/${cell.id}`,
      messages: forgotten.size,
    });
    return { record: { ...record, seen, intent: undefined }, revision };
  }

  /**
   * Writes (or, with no text, removes) a side record: compare-and-set on its last revision. `value`
   * is the object `json` was made from, when the turn has it: the cache keeps it, so the next turn
   * reads it without parsing what this one wrote.
   */
  private async writeSide(
    cell: Cell,
    sk: string,
    json: string | undefined,
    applied: Applied[],
    base: number,
    value?: unknown,
  ): Promise<void> {
    const [bucket, key] = splitSideKey(sk);
    const prev = cell.side.get(sk) ?? (await this.side(cell, sk));
    const list = appendApplied(prev.applied, applied, SIDE_APPLIED_LIMIT);
    const headers: Headers = { [BASE_HEADER]: String(base) };
    if (list.length > 0) headers[APPLIED_HEADER] = encodeAppliedList(list);
    const revision =
      json === undefined
        ? await this.writer.remove(bucket, key, prev.revision, headers)
        : await this.writer.put(bucket, key, Buffer.from(json), prev.revision, headers);
    const present = json !== undefined;
    cell.side.set(
      sk,
      present && value !== undefined
        ? { present, value, revision, applied: list, base }
        : { present, text: json, revision, applied: list, base },
    );
  }

  /** The side record as last written, cached on the cell, with its revision and who wrote it. */
  private async side(cell: Cell, sk: string): Promise<SideRecord> {
    const cached = cell.side.get(sk);
    if (cached) return cached;
    const [bucket, key] = splitSideKey(sk);
    // A store that cannot answer now is a refusal to retry, not the actor's error.
    const e = await this.store(bucket)
      .getLatest(key)
      .catch((err: Error) => {
        throw new ActorError('unavailable', `cannot read ${bucket}/${key}: ${err.message}`);
      });
    const present = !!e && !e.deleted;
    const s: SideRecord = {
      present,
      text: present
        ? Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength).toString('utf8')
        : undefined,
      revision: e?.revision ?? 0,
      applied: decodeAppliedList(e?.headers[APPLIED_HEADER]),
      base: Number(e?.headers[BASE_HEADER] ?? 0) || 0,
    };
    cell.side.set(sk, s);
    return s;
  }

  private store(bucket: string): KvStore {
    const s = this.stores.get(bucket);
    if (!s) throw new Error(`no KV bucket ${bucket}`);
    return s;
  }
}
