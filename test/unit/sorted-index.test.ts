import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ReadItem, SEP, SortedIndex } from '../../actors/entity/read-model.ts';

// The read model's index (actors/entity/read-model.ts) keeps new keys aside and sorts them in once
// something reads, so a watch's first pass of 100,000 events loads in n log n instead of n². These
// check that whatever the order of sets, deletes and reads, it answers as a plainly sorted map would.

type Op =
  { op: 'set'; key: string } | { op: 'del'; key: string } | { op: 'range'; prefix: string; after?: string };

// Keys as the model makes them: tokens joined by NUL (SEP).
const token = (max: number) => fc.stringMatching(new RegExp(`^[a-c]{1,${max}}$`));
const key = fc
  .tuple(token(3), fc.option(token(2), { nil: undefined }))
  .map(([a, b]) => (b === undefined ? a : `${a}${SEP}${b}`));
const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('set' as const), key }),
    fc.record({ op: fc.constant('del' as const), key }),
    fc.record({
      op: fc.constant('range' as const),
      prefix: fc.stringMatching(/^[a-c]{0,2}$/),
      after: fc.option(key, { nil: undefined }),
    }),
  ),
  { maxLength: 200 },
);

function expected(model: Map<string, string>, prefix: string, after?: string): string[] {
  return [...model.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .filter((k) => k.startsWith(prefix) && (after === undefined || k > after));
}

test('any mix of sets, deletes and range reads answers as a sorted map does', () => {
  fc.assert(
    fc.property(ops, (list: Op[]) => {
      const index = new SortedIndex();
      const model = new Map<string, string>();
      let n = 0;
      for (const o of list) {
        if (o.op === 'set') {
          const json = String(n++);
          index.set(new ReadItem(o.key, json));
          model.set(o.key, json);
        } else if (o.op === 'del') {
          index.delete(o.key);
          model.delete(o.key);
        } else {
          const got = [...index.range(o.prefix, o.after)].map((i) => `${i.key}=${i.json}`);
          const want = expected(model, o.prefix, o.after).map((k) => `${k}=${model.get(k)}`);
          assert.equal(got, want);
        }
        assert.is(index.size, model.size);
      }
      assert.equal(index.allKeys(), expected(model, ''));
    }),
    { numRuns: 500 },
  );
});

test('100,000 keys delivered out of order, then one more and a delete, list in order', () => {
  const index = new SortedIndex();
  const keys: string[] = [];
  // A fixed shuffle (a multiplicative step through the range) stands in for write order.
  for (let i = 0; i < 100_000; i++) keys.push(`ns\u0000e${String((i * 7919) % 100_000).padStart(6, '0')}`);
  for (const k of keys) index.set(new ReadItem(k, '{}'));
  index.set(new ReadItem('ns\u0000a', '{}'));
  index.delete('ns\u0000e000005');
  const all = index.allKeys();
  assert.is(all.length, 100_000);
  assert.is(all[0], 'ns\u0000a');
  for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]! < all[i]!, `in order at ${i}`);
  assert.not.ok(all.includes('ns\u0000e000005'));
  assert.equal(
    [...index.range('ns\u0000e00000', 'ns\u0000e000003')].map((i) => i.key),
    ['ns\u0000e000004', 'ns\u0000e000006', 'ns\u0000e000007', 'ns\u0000e000008', 'ns\u0000e000009'],
  );
});

test.run();
