import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  appendApplied,
  applied,
  decodeAppliedList,
  encodeAppliedList,
  findApplied,
  normalizeApplied,
} from '../../actors/runtime/applied.ts';
import { decodeActorRecord, encodeActorRecord, recordHasNoState } from '../../actors/runtime/cell.ts';

// The stored forms of atomic turns (docs/architecture.md, "Atomic turns"): records with `seen` and an
// intent, the applied-message lists of side records, and records written before either existed.

test('a record with an intent reads back as written, values and removals included', () => {
  const data = encodeActorRecord(
    'ns/web-01',
    '{"entity":{"n":1}}',
    { ka: { at: 5 } },
    [['m1', { stored: true }], ['m2']],
    {
      writes: [
        {
          bucket: 'events',
          key: 'ns.web-01.disk',
          prev: 7,
          ids: ['m1'],
          json: '{"check":{"status":2,"state":null}}',
        },
        { bucket: 'events', key: 'ns.web-01.gone', prev: 3, ids: ['m2'], json: undefined },
      ],
    },
  );
  const r = decodeActorRecord(data)!;
  assert.is(r.id, 'ns/web-01');
  assert.equal(r.state, { entity: { n: 1 } });
  assert.equal(r.timers, { ka: { at: 5 } });
  assert.equal(r.seen, [['m1', { stored: true }], ['m2']]);
  assert.equal(r.intent!.writes[0], {
    bucket: 'events',
    key: 'ns.web-01.disk',
    prev: 7,
    ids: ['m1'],
    json: '{"check":{"status":2,"state":null}}',
  });
  assert.equal(r.intent!.writes[1], {
    bucket: 'events',
    key: 'ns.web-01.gone',
    prev: 3,
    ids: ['m2'],
    json: undefined,
  });
});

test('a record written before atomic turns (plain seen ids, no intent) still reads', () => {
  const r = decodeActorRecord(
    Buffer.from('{"id":"a","state":{"x":1},"timers":{},"seen":["old-1","old-2"]}'),
  )!;
  assert.equal(r.seen, [
    ['old-1', { duplicate: true }],
    ['old-2', { duplicate: true }],
  ]);
  assert.is(r.intent, undefined);
});

test('a record without state is told by its prefix, not by a "state":null inside an intent value', () => {
  const ended = encodeActorRecord('a', 'null', {}, [['m', { deleted: true }]]).toString();
  assert.ok(recordHasNoState(ended));
  const live = encodeActorRecord('a"state":null', '{"k":1}', {}, [], {
    writes: [{ bucket: 'b', key: 'k', prev: 0, ids: [], json: '{"state":null}' }],
  }).toString();
  assert.not.ok(recordHasNoState(live));
});

test('applied lists keep the newest entries, find by id, and keep small replies only', () => {
  let list = normalizeApplied([]);
  for (let i = 0; i < 10; i++) list = appendApplied(list, [applied(`m${i}`, { n: i })], 8);
  assert.is(list.length, 8);
  assert.is(findApplied(list, 'm1'), undefined, 'the oldest fell out');
  assert.equal(findApplied(list, 'm9'), ['m9', { n: 9 }]);
  assert.is(findApplied(list, undefined), undefined);
  assert.equal(applied('big', { s: 'x'.repeat(600) }), ['big', { duplicate: true }]);
  assert.equal(applied('none', undefined), ['none']);
  assert.equal(decodeAppliedList(JSON.stringify(list)), list);
  assert.equal(decodeAppliedList(encodeAppliedList(list)), list);
  assert.equal(decodeAppliedList('not json'), []);
  assert.equal(decodeAppliedList(undefined), []);
});

test('the header form writes a reply once for a run of equal replies, and reads back the same list', () => {
  const list = [
    applied('a', { stored: true }),
    applied('b', { stored: true }),
    applied('c', undefined),
    applied('d', { n: 1 }),
    applied('e', { n: 1 }),
  ];
  const text = encodeAppliedList(list);
  assert.is(text, '[["a",{"stored":true}],"b",["c"],["d",{"n":1}],"e"]');
  assert.equal(decodeAppliedList(text), [
    ['a', { stored: true }],
    ['b', { stored: true }],
    ['c'],
    ['d', { n: 1 }],
    ['e', { n: 1 }],
  ]);
  // Trimmed from the front, the first entry still carries its reply.
  assert.equal(decodeAppliedList(encodeAppliedList(appendApplied(list, [], 8).slice(1))), [
    ['b', { stored: true }],
    ['c'],
    ['d', { n: 1 }],
    ['e', { n: 1 }],
  ]);
});

test.run();
