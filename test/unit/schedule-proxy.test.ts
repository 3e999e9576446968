import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';
import { matchEntities } from '../../actors/schedule/proxy.ts';

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

test.run();
