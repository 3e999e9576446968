import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { parse } from 'yaml';
// The dashboard's emitter, a browser module with JSDoc types (web/tsconfig.json checks it).
// @ts-expect-error -- no declaration: the tests' tsconfig does not read JavaScript
import { toYaml } from '../../web/app/components/events/yaml.js';

// "Copy as YAML" on the event detail page (web/app/components/events/yaml.js): whatever JSON value
// it is given, a YAML parser reads back the same value.

const emit = toYaml as (v: unknown) => string;
const same = (v: unknown) => assert.equal(parse(emit(v)), v, emit(v));

test('an event reads back the same, with its output as a literal block', () => {
  const event = {
    check: {
      metadata: { name: 'disk', labels: { 'team/x': 'ops', empty: '' } },
      status: 2,
      output: 'CRITICAL - / is 97% full\n  details: indented\n',
      history: [
        { status: 0, executed: 1700000000 },
        { status: 2, executed: 1700000060 },
      ],
      silenced: null,
      is_silenced: false,
      hooks: [],
      subscriptions: ['linux', 'entity:web-01'],
    },
    entity: { metadata: { name: 'web-01' }, redact: ['password'], last_seen: 0.5, labels: {} },
  };
  const text = emit(event);
  assert.match(text, /\n {2}output: \|\n {4}CRITICAL - \/ is 97% full\n {6}details: indented\n/);
  assert.match(text, /- "entity:web-01"\n|- entity:web-01\n/);
  same(event);
});

test('scalars that would read as something else are quoted', () => {
  for (const s of [
    '',
    ' lead',
    'trail ',
    'true',
    'no',
    'null',
    '~',
    '012',
    '1e3',
    '0x1f',
    '.inf',
    '- a',
    'a: b',
    'a #b',
    '#c',
    '@x',
    '*x',
    '"q"',
    "'q'",
    '\t',
    'é ü',
    '\u2028',
  ])
    same({ [s]: s, list: [s] });
  for (const v of [0, -1.5, 1e21, true, false, null, [], {}, [[]], [{}], { a: [] }]) same({ v, list: [v] });
});

test('any JSON value round-trips (property)', () => {
  const chars = fc.constantFrom(
    'a',
    ' ',
    '\n',
    '\t',
    ':',
    '#',
    '-',
    '"',
    "'",
    '\\',
    '|',
    '>',
    '0',
    '.',
    'é',
    '\r',
    '{',
    '[',
    '&',
    '*',
    '!',
    '%',
    '@',
    '`',
    '?',
    ',',
    '~',
    'y',
  );
  const str = fc.array(chars, { maxLength: 12 }).map((a) => a.join(''));
  fc.assert(
    fc.property(
      fc.oneof(fc.jsonValue(), fc.dictionary(str, fc.oneof(str, fc.array(str, { maxLength: 3 })))),
      (v) => {
        const json = JSON.parse(JSON.stringify(v)) as unknown;
        assert.equal(parse(emit(json)), json, emit(json));
      },
    ),
    { numRuns: 3000 },
  );
});

test.run();
