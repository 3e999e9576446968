import { actorRecordKey } from '../../proto/names.ts';
import type { KvStore } from '../runtime/kv-store.ts';
import { shardOf } from '../runtime/hash.ts';
import type { ActorRecord } from '../runtime/types.ts';
import { STASH_KIND, type StashState } from './messages.ts';

/**
 * Past its deadline: gone for every reader, even before its timer ran (a deadline fires late by a
 * takeover, never early, docs/architecture.md#durable-timers).
 */
export const expired = (s: StashState, now: number): boolean =>
  s.expires_at !== undefined && s.expires_at <= now;

/** The stash in a stored actor record (none when the actor ended it), expired or not. */
export function stashOfRecord(data: Uint8Array): { path: string; stash: StashState } | undefined {
  let record: ActorRecord<StashState> | undefined;
  try {
    record = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as
      ActorRecord<StashState> | undefined;
  } catch {
    return undefined;
  }
  const stash = record?.state;
  if (!stash || typeof record?.id !== 'string') return undefined;
  return { path: record.id, stash };
}

/**
 * Reads of one stash straight from the KV bucket, on any node: the stash actor is the only writer,
 * readers never go through it (as actors/entity/reads.ts).
 */
export class StashReads {
  constructor(
    private readonly store: KvStore,
    private readonly shardCount: number,
  ) {}

  async get(path: string): Promise<StashState | undefined> {
    const e = await this.store.get(actorRecordKey(shardOf(STASH_KIND, path, this.shardCount), [path]));
    if (!e || e.deleted) return undefined;
    const stash = stashOfRecord(e.value)?.stash;
    return stash && !expired(stash, Date.now()) ? stash : undefined;
  }
}
