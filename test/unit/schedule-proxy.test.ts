import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';
import { sandboxReady } from '../../lib/sandbox/index.ts';
import { matchEntities } from '../../actors/schedule/proxy.ts';

// Filters and proxy matching call the sandbox synchronously: its module loads first, as at a node's start.
await sandboxReady();

const lines: string[] = [];
const log = createLogger('warn', {}, (l) => lines.push(l));
const entities = () => [
  { metadata: { name: 'router-1', labels: { kind: 'router' } }, entity_class: 'proxy' },
  { metadata: { name: 'web-1' }, entity_class: 'agent' },
  { metadata: {}, entity_class: 'proxy' },
];

test('every expression must hold; entities without a name are skipped', () => {
  assert.equal(matchEntities(["entity.entity_class == 'proxy'"], entities(), log), ['router-1']);
  assert.equal(
    matchEntities(
      ["entity.entity_class == 'proxy'", "entity.metadata.labels.kind == 'switch'"],
      entities(),
      log,
    ),
    [],
  );
  assert.equal(matchEntities([], entities(), log), ['router-1', 'web-1']);
});

test('an expression only sees a frozen copy: mutations do not leak into the entity', () => {
  const list = entities();
  assert.equal(matchEntities(["entity.metadata.name = 'x'; entity.entity_class === 'proxy'"], list, log), [
    'router-1',
  ]);
  assert.is(list[0]!.metadata.name, 'router-1');
});

test('errors, bad syntax, endless loops and escape attempts match nothing and never throw', () => {
  lines.length = 0;
  assert.equal(matchEntities(['entity.labels.x == 1'], entities(), log), []);
  assert.equal(matchEntities(['entity.('], entities(), log), []);
  assert.equal(matchEntities(['while (true) {}'], entities(), log), []);
  assert.equal(
    matchEntities(["entity.constructor.constructor('return process')().exit(3)"], entities(), log),
    [],
  );
  assert.equal(
    matchEntities(["this.constructor.constructor('return process')().exit(3)"], entities(), log),
    [],
  );
  assert.equal(
    matchEntities(["typeof require === 'undefined' && typeof process === 'undefined'"], entities(), log),
    ['router-1', 'web-1'],
  );
  assert.ok(
    lines.some((l) => l.includes('timed out')),
    'the endless loop is logged',
  );
});

test('promises, pending jobs, memory bombs: no match, nothing reaches the process; a time-out ends the matching', async () => {
  lines.length = 0;
  let rejections = 0;
  const onRejection = () => rejections++;
  process.on('unhandledRejection', onRejection);
  try {
    for (const e of [
      "Promise.reject(new Error('x')), true",
      '(async () => { throw 1 })()',
      '(async () => { await 0; for (;;) {} })(), true',
      '(() => { let a = []; for (;;) a.push(new Uint8Array(1e6).fill(1)); })()',
    ])
      assert.equal(matchEntities([e], entities(), log), [], e);
    await new Promise((r) => setTimeout(r, 20));
  } finally {
    process.off('unhandledRejection', onRejection);
  }
  assert.is(rejections, 0);
  // One time-out, not one per entity: the matching of this fire ends there.
  const many = Array.from({ length: 50 }, (_, i) => ({ metadata: { name: `e${i}` } }));
  const t0 = Date.now();
  assert.equal(matchEntities(["entity.metadata.name == 'e0' || (() => { for (;;) {} })()"], many, log), []);
  assert.ok(Date.now() - t0 < 1000, `took ${Date.now() - t0} ms`);
  assert.ok(lines.some((l) => l.includes('timed out')));
  // An expression that throws for some entities still matches the others.
  assert.equal(matchEntities(['entity.metadata.labels.kind == "router"'], entities(), log), ['router-1']);
});

test.run();
