import { fnv1a32 } from './hash.ts';

/**
 * Rendezvous (highest random weight) hashing: the owner of a shard is the member with the highest
 * hash of `shard:member`. A join or a leave moves only the shards won or lost by that member.
 * Ties go to the smaller name so every node computes the same table.
 */
export function ownerOf(shard: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const m of members) {
    const w = mix32(fnv1a32(`${shard}:${m}`));
    if (w > bestWeight || (w === bestWeight && best !== undefined && m < best)) {
      best = m;
      bestWeight = w;
    }
  }
  return best;
}

/** Murmur3's finalizer: FNV alone spreads near-identical inputs (node-1, node-2) poorly. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shards `member` should own among `members`. */
export function shardsOf(member: string, members: readonly string[], shardCount: number): Set<number> {
  const out = new Set<number>();
  for (let s = 0; s < shardCount; s++) if (ownerOf(s, members) === member) out.add(s);
  return out;
}
