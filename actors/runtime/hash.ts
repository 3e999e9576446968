import { SHARD_COUNT } from '../../proto/names.ts';
import { routeKey } from './types.ts';

const encoder = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of `input`. */
export function fnv1a32(input: string): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(input)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The shard of an actor: fnv1a32 of its route key (`kind/id`, or its entity's for co-located kinds). */
export function shardOf(kind: string, id: string, shardCount = SHARD_COUNT): number {
  return fnv1a32(routeKey(kind, id)) % shardCount;
}
