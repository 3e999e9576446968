import { Mailbox } from './mailbox.ts';
import type { ActorBehavior, ActorRecord, TimerSpec } from './types.ts';

/** A record this actor owns in another bucket, cached as text with the revision its next write expects. */
export interface SideRecord { json: string | undefined; revision: number }

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
  seen: string[] = [];
  revision = 0;
  loaded = false;
  readonly side = new Map<string, SideRecord>();
  readonly inflight = new Map<string, Promise<unknown>>();
  /** Messages waiting for the same turn (ActorHost's batching); undefined when none is gathering. */
  openBatch: unknown[] | undefined;
  lastUsed = Date.now();

  constructor(readonly behavior: ActorBehavior<unknown>, readonly id: string, readonly shard: number, readonly key: string) {}

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
export const splitSideKey = (k: string): [string, string] => { const i = k.indexOf('\u0000'); return [k.slice(0, i), k.slice(i + 1)]; };

/** Builds the stored record around the already serialized state, instead of serializing it again. */
export function encodeRecord(id: string, stateJson: string, timers: Record<string, TimerSpec>, seen: string[]): Buffer {
  return Buffer.from(`{"id":${JSON.stringify(id)},"state":${stateJson},"timers":${JSON.stringify(timers)},"seen":${JSON.stringify(seen)}}`);
}

export function decodeRecord(data: Uint8Array): ActorRecord<unknown> | undefined {
  try {
    const r = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as ActorRecord<unknown>;
    if (typeof r?.id !== 'string') return undefined;
    return { id: r.id, state: r.state ?? undefined, timers: r.timers ?? {}, seen: r.seen ?? [] };
  } catch { return undefined; }
}
