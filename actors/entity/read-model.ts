import { decodeToken } from '../../proto/names.ts';
import type { KvStore } from '../runtime/kv-store.ts';
import { recordHasNoState } from '../runtime/cell.ts';

/**
 * One listed resource. Made from the stored text on every change, but its JSON is worked out only
 * when a list needs it (most records change many times between two lists: an agent's every
 * keepalive rewrites its entity), and parsed only when a selector needs it.
 */
export class ReadItem {
  private text: string | undefined;
  private parsed: unknown;
  constructor(
    readonly key: string,
    private readonly raw: string,
    private readonly extract?: (raw: string) => string,
  ) {}
  get json(): string {
    return (this.text ??= this.extract ? this.extract(this.raw) : this.raw);
  }
  value<T>(): T {
    return (this.parsed ??= JSON.parse(this.json)) as T;
  }
}

/**
 * Items ordered by a composite key (`ns \0 name ...`), so a namespace, an entity's events, or a page
 * after a continue token is a binary search and a slice.
 */
export class SortedIndex {
  private keys: string[] = [];
  /**
   * Keys added since the last read, not yet in `keys`: a watch's first pass delivers 100,000 events
   * in write order, and inserting each in place made loading quadratic (a start with that many
   * events spent 39 % of its CPU there). They are sorted and merged once, when something reads.
   */
  private pending: string[] = [];
  private readonly items = new Map<string, ReadItem>();

  get size(): number {
    return this.items.size;
  }

  set(item: ReadItem): void {
    if (!this.items.has(item.key)) this.pending.push(item.key);
    this.items.set(item.key, item);
  }

  delete(key: string): void {
    if (!this.items.delete(key)) return;
    this.settle();
    const i = this.lowerBound(key);
    if (this.keys[i] === key) this.keys.splice(i, 1);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }
  get(key: string): ReadItem | undefined {
    return this.items.get(key);
  }
  allKeys(): string[] {
    this.settle();
    return [...this.keys];
  }

  /** Items with keys starting with `prefix`, after `after` (exclusive) when given. */
  *range(prefix: string, after?: string): Generator<ReadItem> {
    this.settle();
    let i = this.lowerBound(after !== undefined && after >= prefix ? after : prefix);
    if (after !== undefined && this.keys[i] === after) i++;
    for (; i < this.keys.length; i++) {
      const k = this.keys[i]!;
      if (!k.startsWith(prefix)) return;
      // A key deleted after the generator started has no item any more.
      const item = this.items.get(k);
      if (item) yield item;
    }
  }

  /** Merges the pending keys into the sorted ones: one sort of the new keys and one linear merge. */
  private settle(): void {
    if (this.pending.length === 0) return;
    const added = this.pending.sort(byCodeUnits);
    this.pending = [];
    const old = this.keys;
    if (old.length === 0 || old[old.length - 1]! < added[0]!) {
      this.keys = old.length === 0 ? added : old.concat(added);
      return;
    }
    const merged = new Array<string>(old.length + added.length);
    let i = 0,
      j = 0,
      n = 0;
    while (i < old.length && j < added.length) merged[n++] = old[i]! < added[j]! ? old[i++]! : added[j++]!;
    while (i < old.length) merged[n++] = old[i++]!;
    while (j < added.length) merged[n++] = added[j++]!;
    this.keys = merged;
  }

  private lowerBound(key: string): number {
    let lo = 0,
      hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The order of `<` on strings (UTF-16 code units), which `lowerBound` relies on. */
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const SEP = '\u0000';

/** A change to a stored event, for live streams. `revision` is the KV revision when the watch gives it. */
export interface EventChange {
  op: 'put' | 'delete';
  namespace: string;
  entity: string;
  check: string;
  /** The stored event JSON (put only). */
  json?: string;
  revision?: number;
}
export type EventChangeListener = (change: EventChange) => void;

/**
 * The list side of the entity and event stores on every node: both KV buckets followed by a watch,
 * kept ordered in memory. Lists and pages are served from here without touching NATS; single reads
 * still go to KV, so a client always reads what it just wrote. Lists trail writes by the watch's
 * delivery delay (milliseconds).
 */
export class EntityReadModel {
  readonly entities = new SortedIndex();
  readonly events = new SortedIndex();
  private watches: Array<{ stop(): void }> = [];
  private readonly eventListeners = new Set<EventChangeListener>();
  private eventRev = 0;

  /**
   * The latest revision of the event bucket the model has applied: every change after it reaches
   * the listeners of `onEventChange` (docs/architecture.md#live-event-stream).
   */
  get eventRevision(): number {
    return this.eventRev;
  }

  /** The revisions the event bucket holds now (the oldest kept, the latest written). */
  eventHistory(): Promise<{ first: number; last: number }> {
    return this.eventStore.history();
  }

  /**
   * The event changes after revision `after` through `upTo`, from the bucket itself, in revision
   * order: each key's latest write since `after`. Undefined when more than `max` follow `after`.
   */
  async eventChangesSince(after: number, upTo: number, max: number): Promise<EventChange[] | undefined> {
    const entries = await this.eventStore.changesSince(after, upTo, max);
    if (!entries) return undefined;
    const out: EventChange[] = [];
    for (const e of entries) {
      const k = compositeKey(e.key, false);
      if (!k) continue;
      const [namespace, entity, check] = k.split(SEP) as [string, string, string];
      out.push(
        e.deleted
          ? { op: 'delete', namespace, entity, check, revision: e.revision }
          : {
              op: 'put',
              namespace,
              entity,
              check,
              json: Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength).toString('utf8'),
              revision: e.revision,
            },
      );
    }
    return out;
  }

  /** Calls `listener` on every event change after the first full pass; returns the unsubscribe. */
  onEventChange(listener: EventChangeListener): () => void {
    this.eventListeners.add(listener);
    return () => {
      this.eventListeners.delete(listener);
    };
  }

  constructor(
    private readonly entityStore: KvStore,
    private readonly eventStore: KvStore,
  ) {}

  start(): Promise<void> {
    return Promise.all([
      this.follow(this.entityStore, this.entities, entityItem),
      this.follow(this.eventStore, this.events, eventItem, (c) => this.emitEvent(c)),
    ]).then(() => undefined);
  }

  private emitEvent(change: EventChange): void {
    for (const l of this.eventListeners) {
      try {
        l(change);
      } catch {
        /* a listener's failure is its own; the model goes on */
      }
    }
  }

  private follow(
    store: KvStore,
    index: SortedIndex,
    toItem: (key: string, data: Uint8Array) => ReadItem | undefined,
    emit?: (c: EventChange) => void,
  ): Promise<void> {
    return new Promise((resolve) => {
      let seen: Set<string> | undefined;
      // The first pass is the starting state, not changes; a later pass (after the watch was away)
      // reports only what differs from what the model had.
      let first = true;
      const removed = (k: string, revision?: number) => {
        if (!index.has(k)) return;
        index.delete(k);
        if (emit && !first) {
          const [namespace, entity, check] = k.split(SEP) as [string, string, string];
          emit({ op: 'delete', namespace, entity, check, revision });
        }
      };
      this.watches.push(
        store.follow({
          onStart: () => {
            seen = new Set();
          },
          onPut: (key, data, revision?: number) => {
            if (emit && revision !== undefined && revision > this.eventRev) this.eventRev = revision;
            const item = toItem(key, data);
            if (!item) {
              const k = compositeKey(key, store === this.entityStore);
              if (k) removed(k, revision);
              return;
            }
            seen?.add(item.key);
            const before = emit && !first ? index.get(item.key) : undefined;
            index.set(item);
            if (emit && !first && !(seen && before?.json === item.json)) {
              const [namespace, entity, check] = item.key.split(SEP) as [string, string, string];
              emit({ op: 'put', namespace, entity, check, json: item.json, revision });
            }
          },
          onDelete: (key, revision?: number) => {
            if (emit && revision !== undefined && revision > this.eventRev) this.eventRev = revision;
            const k = compositeKey(key, store === this.entityStore);
            if (k) removed(k, revision);
          },
          onReady: () => {
            // What the new pass did not deliver was deleted while the watch was away.
            if (seen) for (const k of index.allKeys()) if (!seen.has(k)) removed(k);
            seen = undefined;
            first = false;
            resolve();
          },
        }),
      );
    });
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }
}

/** `017.default.web-01` → `default\0web-01`; `default.web-01.disk` → `default\0web-01\0disk`. */
function compositeKey(kvKey: string, isEntityRecord: boolean): string | undefined {
  const tokens = kvKey.split('.');
  if (isEntityRecord)
    return tokens.length === 3 ? decodeToken(tokens[1]!) + SEP + decodeToken(tokens[2]!) : undefined;
  return tokens.length === 3 ? tokens.map(decodeToken).join(SEP) : undefined;
}

/** The entity in an entity actor's record; `null` for a record that holds none. */
function entityOfRecord(raw: string): string {
  try {
    return JSON.stringify((JSON.parse(raw) as { state?: { entity?: unknown } }).state?.entity ?? null);
  } catch {
    return 'null';
  }
}

function entityItem(kvKey: string, data: Uint8Array): ReadItem | undefined {
  const key = compositeKey(kvKey, true);
  if (!key) return undefined;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  // A record without state (the actor keeps only timers) is no entity.
  if (recordHasNoState(raw)) return undefined;
  return new ReadItem(key, raw, entityOfRecord);
}

function eventItem(kvKey: string, data: Uint8Array): ReadItem | undefined {
  const key = compositeKey(kvKey, false);
  return key
    ? new ReadItem(key, Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'))
    : undefined;
}
