import { SHARD_COUNT } from '../../proto/names.ts';

const encoder = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of `input`. */
export function fnv1a32(input: string): number {
  let hash = 0x811c9dc5;
  // Names are nearly always ASCII, where a char code is the byte: no encoding buffer per call.
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c > 0x7f) return fnvBytes(encoder.encode(input));
    hash = Math.imul(hash ^ c, 0x01000193);
  }
  return hash >>> 0;
}

function fnvBytes(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash >>> 0;
}

/** The shard of an actor: fnv1a32 of `kind/id`. */
export function shardOf(kind: string, id: string, shardCount = SHARD_COUNT): number {
  return fnv1a32(`${kind}/${id}`) % shardCount;
}
