import { encodeAppliedList, normalizeApplied, type Applied } from './applied.ts';
import { Mailbox } from './mailbox.ts';
import type { ActorBehavior, ActorRecord, Intent, IntentWrite, TimerSpec } from './types.ts';

/**
 * A record this actor owns in another bucket, cached with the revision its next write expects, the
 * messages that wrote it last, and the record revision its writer had (see applied.ts). The value is
 * kept as the object the actor wrote (`value`), or as the text read from the store until a turn
 * first needs it (`text`, parsed once then dropped); `present` is false for a record that does not
 * exist (docs/architecture.md#owned-state-stays-decoded).
 */
export interface SideRecord {
  present: boolean;
  text?: string | undefined;
  value?: unknown;
  revision: number;
  applied: Applied[];
  base: number;
}

/**
 * One live actor on its owner: the mailbox, the committed record and its revision, and the side
 * records it owns. `stateJson` is the committed state as stored, so a turn can tell whether it
 * changed anything with one serialization.
 */
export class Cell {
  readonly mailbox = new Mailbox();
  state: unknown = undefined;
  stateJson = 'null';
  timers: Record<string, TimerSpec> = {};
  seen: Applied[] = [];
  revision = 0;
  loaded = false;
  readonly side = new Map<string, SideRecord>();
  readonly inflight = new Map<string, Promise<unknown>>();
  /** Messages waiting for the same turn (ActorHost's batching); undefined when none is gathering. */
  openBatch: unknown[] | undefined;
  lastUsed = Date.now();

  constructor(
    readonly behavior: ActorBehavior<unknown>,
    readonly id: string,
    readonly shard: number,
    readonly key: string,
  ) {}

  /** Takes a record as loaded from KV (undefined: the actor has no record yet). */
  adopt(record: ActorRecord<unknown> | undefined, revision: number): void {
    this.state = record?.state;
    this.stateJson = JSON.stringify(record?.state ?? null);
    this.timers = record?.timers ?? {};
    this.seen = record?.seen ?? [];
    this.revision = revision;
    this.loaded = true;
  }
}

export const sideKey = (bucket: string, key: string) => `${bucket}\u0000${key}`;
export const splitSideKey = (k: string): [string, string] => {
  const i = k.indexOf('\u0000');
  return [k.slice(0, i), k.slice(i + 1)];
};

/**
 * Builds the stored record around the already serialized state (and the intent's already
 * serialized values) instead of serializing them again. `state` directly follows `id`: the read
 * model tells a record without state by that prefix.
 */
export function encodeActorRecord(
  id: string,
  stateJson: string,
  timers: Record<string, TimerSpec>,
  seen: Applied[],
  intent?: Intent,
): Buffer {
  let text = `{"id":${JSON.stringify(id)},"state":${stateJson},"timers":${JSON.stringify(timers)},"seen":${encodeAppliedList(seen)}`;
  if (intent && intent.writes.length > 0) {
    const writes = intent.writes.map((w) => {
      const head = `[${JSON.stringify(w.bucket)},${JSON.stringify(w.key)},${w.prev},${JSON.stringify(w.ids)}`;
      return w.json === undefined ? `${head}]` : `${head},${w.json}]`;
    });
    text += `,"intent":{"writes":[${writes.join(',')}]}`;
  }
  return Buffer.from(`${text}}`);
}

export function decodeActorRecord(data: Uint8Array): ActorRecord<unknown> | undefined {
  try {
    const r = JSON.parse(
      Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'),
    ) as ActorRecord<unknown> & { seen?: unknown; intent?: { writes?: unknown[] } };
    if (typeof r?.id !== 'string') return undefined;
    return {
      id: r.id,
      state: r.state ?? undefined,
      timers: r.timers ?? {},
      seen: normalizeApplied(r.seen),
      intent: decodeIntent(r.intent),
    };
  } catch {
    return undefined;
  }
}

function decodeIntent(raw: { writes?: unknown[] } | undefined): Intent | undefined {
  if (!raw || !Array.isArray(raw.writes) || raw.writes.length === 0) return undefined;
  const writes: IntentWrite[] = [];
  for (const w of raw.writes) {
    if (!Array.isArray(w) || typeof w[0] !== 'string' || typeof w[1] !== 'string' || typeof w[2] !== 'number')
      continue;
    const ids = Array.isArray(w[3]) ? w[3].filter((x): x is string => typeof x === 'string') : [];
    writes.push({
      bucket: w[0],
      key: w[1],
      prev: w[2],
      ids,
      json: w.length > 4 ? JSON.stringify(w[4]) : undefined,
    });
  }
  return writes.length ? { writes } : undefined;
}

/** True when a stored record holds no state (an actor that ended itself, or one with timers only). */
export function recordHasNoState(raw: string): boolean {
  const i = raw.indexOf(',"state":');
  return i >= 0 && raw.startsWith('null', i + 9);
}
