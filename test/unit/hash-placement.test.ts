import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fnv1a32, shardOf } from '../../actors/runtime/hash.ts';
import { ownerOf, shardsOf } from '../../actors/runtime/placement.ts';

test('fnv1a32 matches the published test vectors', () => {
  assert.is(fnv1a32(''), 0x811c9dc5);
  assert.is(fnv1a32('a'), 0xe40c292c);
  assert.is(fnv1a32('foobar'), 0xbf9cf968);
});

test('fnv1a32 hashes UTF-8 bytes', () => {
  assert.is(fnv1a32('é'), fnv1a32('\u00e9'));
  assert.is.not(fnv1a32('é'), fnv1a32('e'));
});

test('shardOf is stable, in range, and the hash of kind/id', () => {
  const s = shardOf('entity', 'default/web-01');
  assert.ok(s >= 0 && s < 256);
  assert.is(shardOf('entity', 'default/web-01'), s);
  assert.is(s, fnv1a32('entity/default/web-01') % 256);
  assert.is(shardOf('entity', 'default/web-01', 16), fnv1a32('entity/default/web-01') % 16);
});

test('shards spread evenly enough over 10k entities', () => {
  const counts = new Array(256).fill(0);
  for (let i = 0; i < 10_000; i++) counts[shardOf('entity', `default/host-${i}`)]++;
  const min = Math.min(...counts),
    max = Math.max(...counts);
  assert.ok(min > 15 && max < 70, `min ${min} max ${max}`);
});

test('every shard has exactly one owner among the members', () => {
  const members = ['node-a', 'node-b', 'node-c'];
  const union = new Set<number>();
  let total = 0;
  for (const m of members) {
    const mine = shardsOf(m, members, 256);
    total += mine.size;
    for (const s of mine) union.add(s);
    assert.ok(mine.size > 60 && mine.size < 110, `${m} owns ${mine.size}`);
  }
  assert.is(total, 256);
  assert.is(union.size, 256);
});

test('rendezvous placement is independent of member order', () => {
  for (let s = 0; s < 256; s++) assert.is(ownerOf(s, ['x', 'y', 'z']), ownerOf(s, ['z', 'x', 'y']));
});

test('a joining member takes shards only from others, about 1/N of them', () => {
  const before = ['b1', 'b2', 'b3'];
  const after = [...before, 'b4'];
  let moved = 0;
  for (let s = 0; s < 256; s++) {
    const o1 = ownerOf(s, before),
      o2 = ownerOf(s, after);
    if (o1 !== o2) {
      moved++;
      assert.is(o2, 'b4', `shard ${s} moved between old members`);
    }
  }
  assert.ok(moved > 40 && moved < 90, `moved ${moved}`);
});

test('a leaving member gives up only its own shards', () => {
  const before = ['b1', 'b2', 'b3', 'b4'];
  const after = ['b1', 'b2', 'b4'];
  for (let s = 0; s < 256; s++) {
    if (ownerOf(s, before) !== 'b3') assert.is(ownerOf(s, after), ownerOf(s, before));
  }
});

test('no members, no owner', () => {
  assert.is(ownerOf(3, []), undefined);
});

test.run();
