// suite-timeout: 240
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import {
  checkSyntax,
  Sandbox,
  SandboxDefineError,
  sandboxReady,
  type SandboxResult,
} from '../../lib/sandbox/index.ts';
import { engineStats, MODULE_MEMORY } from '../../lib/sandbox/engine.ts';
import { fuzz, jsonValue } from '../harness/fuzz.ts';

// Fuzzing the JavaScript sandbox (issue 13) with generated sources, as filter expressions and as
// mutator bodies: arbitrary text and soups of the tokens attacks are made of (endless loops, memory
// bombs, promises, constructor and prototype escapes). Property: a source compiles or is refused with
// a SandboxDefineError that checkSyntax agrees with; an evaluation is a result (a value of the mode's
// type, or an error text), never an exception, a hang past its deadline or a change to this process;
// and the sandbox answers a known expression right after each case.

const RUNS = 10_000;
const TIMEOUT_MS = 20;

await sandboxReady();

const TOKENS = [
  'event',
  'event.check.status',
  'event.entity.metadata.name',
  '.constructor',
  ".constructor('return this')()",
  '__proto__',
  'Object.prototype',
  '.polluted = 1',
  'globalThis',
  'this',
  'Function',
  'eval',
  'Promise.reject(1)',
  '(async () => { throw 1 })()',
  'await 0',
  'new Uint8Array(1e7).fill(1)',
  '"x".repeat(1e6)',
  'for (;;) {}',
  'while (true) {}',
  '(function f() { return f() })()',
  'try {',
  '} catch (e) {}',
  'return',
  'var a = [];',
  'a.push(a)',
  'JSON.parse',
  'JSON.stringify(event)',
  'hour(event.timestamp)',
  'weekday(0)',
  'seconds',
  'Symbol',
  'Proxy',
  'Reflect',
  'import("x")',
  'require',
  'process',
  '==',
  '&&',
  '||',
  '?',
  ':',
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  ';',
  ',',
  '=>',
  ' ',
  '"',
  "'",
  '`',
  '/',
  '\\',
  '\n',
  '0',
  '2',
  'null',
];

const source = fc.oneof(
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 3 })), { maxLength: 12 })
      .map((t) => t.join('')),
  },
);

const input = { check: { status: 2, metadata: { name: 'c' } }, entity: { metadata: { name: 'e1' } } };

test(`sandbox: ${RUNS.toLocaleString('en')} generated expressions and bodies compile or are refused, and evaluate to a result within the limits`, async () => {
  const sb = new Sandbox();
  const probe = sb.define('expression', "event.check.status == 2 && event.entity.metadata.name == 'e1'");
  let defined = 0;
  let rejections = 0;
  const onRejection = () => rejections++;
  process.on('unhandledRejection', onRejection);
  try {
    await fuzz(
      'sandbox sources',
      fc.property(
        fc.constantFrom('expression', 'body') as fc.Arbitrary<'expression' | 'body'>,
        source,
        jsonValue(),
        (kind, src, data) => {
          const syntax = checkSyntax(kind, src);
          let id: number;
          try {
            id = sb.define(kind, src);
          } catch (err) {
            assert.instance(err, SandboxDefineError, `define ${JSON.stringify(src)}: ${String(err)}`);
            assert.type(syntax, 'string', `checkSyntax agrees that ${JSON.stringify(src)} does not compile`);
            return;
          }
          assert.is(syntax, undefined, `checkSyntax agrees that ${JSON.stringify(src)} compiles`);
          defined++;
          for (const value of [input, data]) {
            const r: SandboxResult = sb.run(id, value, {
              mode: kind === 'expression' ? 'bool' : 'value',
              timeoutMs: TIMEOUT_MS,
            });
            if (r.ok) {
              if (kind === 'expression') assert.type(r.value, 'boolean');
              else assert.ok(r.value === null || typeof r.value === 'string', JSON.stringify(r));
            } else assert.type(r.error, 'string');
          }
          assert.ok(engineStats().memoryBytes <= MODULE_MEMORY.maximumBytes);
          assert.equal(sb.run(probe, input, { mode: 'bool' }), { ok: true, value: true }, `after ${src}`);
          assert.is(({} as Record<string, unknown>).polluted, undefined, 'the host prototype is untouched');
        },
      ),
      RUNS,
    );
  } finally {
    process.off('unhandledRejection', onRejection);
    sb.dispose();
  }
  // Let any promise that escaped settle before counting.
  await new Promise((r) => setTimeout(r, 50));
  assert.is(rejections, 0, 'no promise rejection reached this process');
  assert.ok(defined > RUNS / 10, `enough generated sources compiled to exercise evaluation (${defined})`);
});

test.run();
