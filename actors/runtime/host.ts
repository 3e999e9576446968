import { actorHeaders, actorRecordKey, shardToken, subjects } from '../../proto/names.ts';
import type { Logger } from '../../proto/log.ts';
import { shardOf } from './hash.ts';
import { Mailbox } from './mailbox.ts';
import type { InboundMsg, KvStore, NatsAdapter } from './nats.ts';
import type { ShardHost } from './shards.ts';
import { TimerHeap, type TimerEntry } from './timers.ts';
import { ActorError, type ActorBehavior, type ActorRecord, type TimerSpec, type Turn } from './types.ts';
import { encodeReply } from './reply.ts';
import { RecordWriter } from './writer.ts';

const SEEN_LIMIT = 16;
const HANDOFF_DRAIN_MS = 10_000;

/** Thrown inside a turn when the shard was lost under it: nothing is written, nothing replied. */
class Fenced extends Error { constructor() { super('shard no longer owned'); this.name = 'Fenced'; } }

interface SideRecord { value: unknown; revision: number }

class Cell {
  readonly mailbox = new Mailbox();
  record: ActorRecord<unknown> | undefined;
  revision = 0;
  loaded = false;
  readonly side = new Map<string, SideRecord>();
  readonly inflight = new Map<string, Promise<unknown>>();
  lastUsed = Date.now();
  constructor(readonly behavior: ActorBehavior<unknown>, readonly id: string, readonly shard: number, readonly key: string) {}
}

interface ActiveShard { fence: number; unsubscribe(): void; acquiredAt: number }

export interface ActorHostOptions {
  nats: NatsAdapter;
  stores: Map<string, KvStore>;
  behaviors: ActorBehavior<any>[];
  /** The local lease guard: false means this node must not start or finish any work. */
  guard: () => boolean;
  shardCount: number;
  log: Logger;
  /** Idle actors leave memory after this long (their deadlines stay armed). */
  passivateAfterMs?: number;
}

/**
 * Hosts the actors of the shards this node owns: one mailbox subscription per shard, turns run one
 * at a time per actor, state committed with compare-and-set before any reply, and the durable
 * timers of the shard kept in a heap.
 */
export class ActorHost implements ShardHost {
  private readonly shards = new Map<number, ActiveShard>();
  private readonly cells = new Map<string, Cell>();
  private readonly behaviors = new Map<string, ActorBehavior<unknown>>();
  private readonly timers: TimerHeap;
  private readonly writer: RecordWriter;
  private readonly sweep: NodeJS.Timeout;
  /** Turns committed by this node, for metrics and tests. */
  committedTurns = 0;
  /** Asks etcd whether this node still owns a shard (set by the shard manager). */
  verifyOwnership: ((shard: number) => Promise<boolean>) | undefined;
  private readonly debug: boolean;

  constructor(private readonly opts: ActorHostOptions) {
    for (const b of opts.behaviors) this.behaviors.set(b.kind, b);
    this.debug = opts.log.enabled('debug');
    this.timers = new TimerHeap((e) => this.onTimer(e));
    this.writer = new RecordWriter(opts.stores);
    const idle = opts.passivateAfterMs ?? 10 * 60_000;
    this.sweep = setInterval(() => this.passivate(idle), Math.min(idle, 60_000));
    this.sweep.unref();
  }

  get ownedCount(): number { return this.shards.size; }
  get actorCount(): number { return this.cells.size; }
  get timerCount(): number { return this.timers.size; }
  mailboxDepth(): number { let d = 0; for (const c of this.cells.values()) d += c.mailbox.depth; return d; }

  async activate(shard: number, fence: number): Promise<void> {
    const acquiredAt = Date.now();
    // Re-arm every deadline of the shard from its records before taking messages.
    for (const b of this.behaviors.values()) {
      const store = this.store(b.bucket);
      const entries = await store.list(`${shardToken(shard)}.>`);
      for (const e of entries) {
        const record = decodeRecord(e.value);
        if (!record) continue;
        const cell = this.cell(b, record.id, shard);
        if (!cell.loaded) { cell.record = record; cell.revision = e.revision; cell.loaded = true; }
        for (const [name, spec] of Object.entries(record.timers)) this.arm(cell, name, spec, acquiredAt);
      }
    }
    if (!this.opts.guard()) throw new Fenced();
    const sub = this.opts.nats.subscribe(subjects.actorShard(shard), (m) => this.onMessage(shard, m));
    this.shards.set(shard, { fence, unsubscribe: sub.unsubscribe, acquiredAt });
    this.opts.log.debug('shard activated', { shard, fence, timers: this.timers.size });
  }

  async deactivate(shard: number): Promise<void> {
    const active = this.shards.get(shard);
    if (!active) return;
    active.unsubscribe();
    this.timers.dropShard(shard);
    const cells = [...this.cells.values()].filter((c) => c.shard === shard);
    // Let turns already in the mailboxes finish (their writes land before we release the key).
    await Promise.race([
      Promise.all(cells.map((c) => c.mailbox.idle())),
      new Promise((r) => setTimeout(r, HANDOFF_DRAIN_MS)),
    ]);
    this.shards.delete(shard);
    for (const c of cells) this.cells.delete(c.key);
  }

  drop(shard: number): void {
    const active = this.shards.get(shard);
    if (!active) return;
    this.shards.delete(shard);
    active.unsubscribe();
    this.timers.dropShard(shard);
    for (const c of [...this.cells.values()]) if (c.shard === shard) this.cells.delete(c.key);
  }

  /** Runs a turn on an actor of an owned shard from inside this node (used by timers and tests). */
  private onMessage(shard: number, m: InboundMsg): void {
    if (!this.opts.guard() || !this.shards.has(shard)) return; // a stale owner stays silent
    const kind = m.header(actorHeaders.kind) ?? '';
    const id = m.header(actorHeaders.id) ?? '';
    const type = m.header(actorHeaders.type) ?? '';
    const msgId = m.header(actorHeaders.msgId);
    const behavior = this.behaviors.get(kind);
    if (!behavior) { m.respond(encodeReply({ error: new ActorError('invalid', `unknown actor kind "${kind}"`) })); return; }
    if (!id || shardOf(kind, id, this.opts.shardCount) !== shard) {
      m.respond(encodeReply({ error: new ActorError('invalid', `actor ${kind}/${id} does not live in shard ${shard}`) }));
      return;
    }
    let body: unknown;
    try { body = m.data.length ? JSON.parse(Buffer.from(m.data).toString('utf8')) : undefined; }
    catch { m.respond(encodeReply({ error: new ActorError('invalid', 'message body is not JSON') })); return; }

    const cell = this.cell(behavior, id, shard);
    const running = msgId ? cell.inflight.get(msgId) : undefined;
    const result = running ?? cell.mailbox.post(() => this.turn(cell, msgId, (t) => behavior.receive(t, type, body)));
    if (msgId && !running) {
      cell.inflight.set(msgId, result);
      void result.catch(() => {}).finally(() => cell.inflight.delete(msgId));
    }
    result.then(
      (value) => m.respond(encodeReply({ value })),
      (err: unknown) => {
        if (err instanceof Fenced) return;
        if (err instanceof ActorError) { m.respond(encodeReply({ error: err })); return; }
        this.opts.log.error('actor turn failed', { kind, id, type, error: (err as Error).message });
        m.respond(encodeReply({ error: new ActorError('internal', (err as Error).message) }));
      },
    );
  }

  private onTimer(e: TimerEntry): void {
    if (!this.opts.guard() || !this.shards.has(e.shard)) return;
    const behavior = this.behaviors.get(e.kind);
    if (!behavior) return;
    const cell = this.cell(behavior, e.id, e.shard);
    void cell.mailbox.post(() => this.turn(cell, undefined, async (t) => {
      // A newer deadline replaced this one after it was queued: nothing to do.
      if (t.timer(e.name)?.at !== e.at) return;
      t.clearTimer(e.name);
      this.opts.log.debug('deadline fired', { actor: `${e.kind}/${e.id}`, timer: e.name, at: e.at, late_ms: Date.now() - e.at });
      await behavior.fire(t, e.name, e.at);
    })).catch((err) => {
      if (!(err instanceof Fenced)) this.opts.log.error('timer turn failed', { actor: `${e.kind}/${e.id}`, timer: e.name, error: (err as Error).message });
    });
  }

  private assertOwned(shard: number): void {
    if (!this.opts.guard() || !this.shards.has(shard)) throw new Fenced();
  }

  private async turn<R>(cell: Cell, msgId: string | undefined, body: (t: Turn<unknown>) => Promise<R>): Promise<R | { duplicate: true }> {
    this.assertOwned(cell.shard);
    cell.lastUsed = Date.now();
    if (!cell.loaded) await this.load(cell);
    const record: ActorRecord<unknown> = cell.record ?? { id: cell.id, timers: {}, seen: [] };
    if (msgId && record.seen.includes(msgId)) return { duplicate: true };

    const turn = new TurnImpl(cell, record, this, this.opts.log);
    let result: R;
    try {
      result = await body(turn);
    } catch (err) {
      // The actor refused the message: nothing it staged is applied.
      if (err instanceof ActorError) throw err;
      this.evict(cell);
      throw err;
    }
    this.assertOwned(cell.shard);

    const next: ActorRecord<unknown> = { id: cell.id, state: turn.state, timers: turn.timers, seen: record.seen };
    const recordChanged = turn.touched;
    if (recordChanged && msgId) next.seen = [...record.seen, msgId].slice(-SEEN_LIMIT);
    try {
      const writes: Promise<void>[] = [];
      if (recordChanged) {
        writes.push(this.writer.put(cell.behavior.bucket, cell.key, encodeRecord(next), cell.revision).then((rev) => { cell.revision = rev; }));
      }
      for (const [sideKey, w] of turn.sideWrites) {
        const [bucket, key] = splitSideKey(sideKey);
        const known = cell.side.get(sideKey) ?? { value: undefined, revision: await this.readRevision(bucket, key) };
        const value = w.value === undefined ? undefined : w.value;
        writes.push((value === undefined
          ? this.writer.remove(bucket, key, known.revision).then((rev) => { cell.side.set(sideKey, { value: undefined, revision: rev }); })
          : this.writer.put(bucket, key, Buffer.from(JSON.stringify(value)), known.revision).then((rev) => { cell.side.set(sideKey, { value, revision: rev }); })));
      }
      await Promise.all(writes);
    } catch (err) {
      this.opts.log.warn('state write failed; reloading the actor', { actor: `${cell.behavior.kind}/${cell.id}`, error: (err as Error).message });
      void this.recover(cell);
      throw new Fenced();
    }
    // A node frozen during the write learns here that its lease ran out: the write may have
    // landed (the new owner will see it), but we must not claim it with a reply.
    this.assertOwned(cell.shard);
    if (recordChanged) {
      cell.record = next;
      this.syncTimers(cell, record.timers, next.timers);
    }
    if (this.debug) this.opts.log.debug('turn committed', { actor: `${cell.behavior.kind}/${cell.id}`, shard: cell.shard, msg_id: msgId, writes: turn.sideWrites.size + (recordChanged ? 1 : 0) });
    this.committedTurns++;
    return result;
  }

  private async readRevision(bucket: string, key: string): Promise<number> {
    const e = await this.store(bucket).get(key);
    return e?.revision ?? 0;
  }

  /** Cached read of a side record with its revision, for the compare-and-set of the next write. */
  async readSide(cell: Cell, bucket: string, key: string): Promise<unknown> {
    const sideKey = `${bucket}\u0000${key}`;
    const cached = cell.side.get(sideKey);
    if (cached) return cached.value;
    const e = await this.store(bucket).get(key);
    const value = e && !e.deleted ? JSON.parse(Buffer.from(e.value).toString('utf8')) : undefined;
    cell.side.set(sideKey, { value, revision: e?.revision ?? 0 });
    return value;
  }

  private syncTimers(cell: Cell, before: Record<string, TimerSpec>, after: Record<string, TimerSpec>): void {
    for (const name of Object.keys(before)) if (!(name in after)) this.timers.delete(timerKey(cell, name));
    for (const [name, spec] of Object.entries(after)) {
      if (before[name]?.at !== spec.at) this.arm(cell, name, spec);
    }
  }

  private arm(cell: Cell, name: string, spec: TimerSpec, takeoverAt?: number): void {
    const fireAt = takeoverAt !== undefined && spec.grace ? Math.max(spec.at, takeoverAt + spec.grace) : spec.at;
    this.timers.set({ key: timerKey(cell, name), shard: cell.shard, kind: cell.behavior.kind, id: cell.id, name, at: spec.at, fireAt });
  }

  private async load(cell: Cell): Promise<void> {
    const e = await this.store(cell.behavior.bucket).get(cell.key);
    if (e && !e.deleted) { cell.record = decodeRecord(e.value); cell.revision = e.revision; }
    else { cell.record = undefined; cell.revision = e?.revision ?? 0; }
    cell.loaded = true;
  }

  /**
   * After a failed write the cached view of an actor cannot be trusted: a compare-and-set lost to
   * another writer (a stale owner's late write, or a new owner if we are the stale one), or a
   * write timed out and may or may not have landed. Ask whether the shard is still ours; if so,
   * reload the actor and re-arm its deadlines from what is really stored, so none is lost.
   */
  private async recover(cell: Cell): Promise<void> {
    this.evict(cell);
    if (!this.opts.guard() || !this.shards.has(cell.shard)) return;
    const stillOwner = this.verifyOwnership ? await this.verifyOwnership(cell.shard).catch(() => false) : true;
    if (!stillOwner) { this.drop(cell.shard); return; }
    const fresh = this.cell(cell.behavior, cell.id, cell.shard);
    await fresh.mailbox.post(async () => {
      if (!fresh.loaded) await this.load(fresh);
      for (const [name, spec] of Object.entries(fresh.record?.timers ?? {})) this.arm(fresh, name, spec);
    }).catch((err) => this.opts.log.warn('reloading an actor failed', { actor: `${cell.behavior.kind}/${cell.id}`, error: (err as Error).message }));
  }

  private evict(cell: Cell): void {
    if (this.cells.get(cell.key) === cell) this.cells.delete(cell.key);
  }

  private cell(behavior: ActorBehavior<unknown>, id: string, shard: number): Cell {
    const key = actorRecordKey(shard, behavior.keyTokens(id));
    let c = this.cells.get(key);
    if (!c) { c = new Cell(behavior, id, shard, key); this.cells.set(key, c); }
    return c;
  }

  private store(bucket: string): KvStore {
    const s = this.opts.stores.get(bucket);
    if (!s) throw new Error(`no KV bucket ${bucket}`);
    return s;
  }

  private passivate(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const c of [...this.cells.values()]) if (c.lastUsed < cutoff && c.mailbox.depth === 0) this.cells.delete(c.key);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweep);
    for (const s of [...this.shards.keys()]) this.drop(s);
    this.timers.clear();
  }
}

const timerKey = (cell: Cell, name: string) => `${cell.key}\u0000${name}`;
const splitSideKey = (k: string): [string, string] => { const i = k.indexOf('\u0000'); return [k.slice(0, i), k.slice(i + 1)]; };

function encodeRecord(r: ActorRecord<unknown>): Buffer { return Buffer.from(JSON.stringify(r)); }
function decodeRecord(data: Uint8Array): ActorRecord<unknown> | undefined {
  try {
    const r = JSON.parse(Buffer.from(data).toString('utf8')) as ActorRecord<unknown>;
    return typeof r?.id === 'string' ? { ...r, timers: r.timers ?? {}, seen: r.seen ?? [] } : undefined;
  } catch { return undefined; }
}

class TurnImpl implements Turn<unknown> {
  readonly kind: string;
  readonly id: string;
  readonly shard: number;
  readonly now = Date.now();
  state: unknown;
  timers: Record<string, TimerSpec>;
  readonly sideWrites = new Map<string, { value: unknown }>();
  private timersChanged = false;
  private readonly initialState: string;

  constructor(private readonly cell: Cell, record: ActorRecord<unknown>, private readonly host: ActorHost, readonly log: Logger) {
    this.kind = cell.behavior.kind;
    this.id = cell.id;
    this.shard = cell.shard;
    // Turns work on a copy: a turn that throws leaves the cell's state untouched.
    this.state = record.state === undefined ? undefined : structuredClone(record.state);
    this.initialState = JSON.stringify(record.state ?? null);
    this.timers = { ...record.timers };
  }

  /** Whether the actor's own record must be written. */
  get touched(): boolean { return this.timersChanged || JSON.stringify(this.state ?? null) !== this.initialState; }

  setTimer(name: string, at: number, graceMs?: number): void {
    this.timers[name] = graceMs ? { at, grace: graceMs } : { at };
    this.timersChanged = true;
  }
  clearTimer(name: string): void {
    if (name in this.timers) { delete this.timers[name]; this.timersChanged = true; }
  }
  timer(name: string): TimerSpec | undefined { return this.timers[name]; }

  async read<T>(bucket: string, key: string): Promise<T | undefined> {
    const staged = this.sideWrites.get(`${bucket}\u0000${key}`);
    if (staged) return staged.value as T | undefined;
    const v = await this.host.readSide(this.cell, bucket, key);
    return v === undefined ? undefined : structuredClone(v) as T;
  }
  write(bucket: string, key: string, value: unknown): void { this.sideWrites.set(`${bucket}\u0000${key}`, { value }); }
  remove(bucket: string, key: string): void { this.sideWrites.set(`${bucket}\u0000${key}`, { value: undefined }); }
}
