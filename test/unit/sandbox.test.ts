// suite-timeout: 120
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkSyntax,
  Sandbox,
  SandboxDefineError,
  sandboxReady,
  type SandboxResult,
} from '../../lib/sandbox/index.ts';
import { engineStats, MODULE_MEMORY } from '../../lib/sandbox/engine.ts';

// lib/sandbox: user JavaScript in QuickJS (WebAssembly) with a memory budget, a stack limit and a
// deadline per evaluation; every failure is a result, never an exception of this process.

await sandboxReady();

const sb = new Sandbox();
const input = {
  check: { status: 2, executed: 0, labels: { a: 'b' } },
  entity: { metadata: { name: 'e1' } },
  list: [1, 2],
};
const evalBool = (expr: string, value: unknown = input) =>
  sb.run(sb.define('expression', expr), value, { mode: 'bool', timeoutMs: 100 });
const evalValue = (body: string, value: unknown = input, timeoutMs = 100) =>
  sb.run(sb.define('body', body), value, { mode: 'value', timeoutMs });
const errorOf = (r: SandboxResult) => {
  assert.is(r.ok, false, JSON.stringify(r));
  return (r as { error: string }).error;
};
const rssMiB = () => process.memoryUsage().rss / 1048576;
let unhandled = 0;
process.on('unhandledRejection', () => unhandled++);

test('expressions see the event and give their truthiness; bodies give strings', () => {
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
  assert.equal(evalBool("event.check.labels.a === 'c'"), { ok: true, value: false });
  assert.equal(evalBool('event.list.length'), { ok: true, value: true });
  assert.equal(evalBool('event.missing'), { ok: true, value: false });
  assert.equal(evalValue("return 'x' + event.check.status"), { ok: true, value: 'x2' });
  assert.equal(evalValue('return null'), { ok: true, value: null });
  assert.equal(evalValue(''), { ok: true, value: null });
  assert.equal(evalValue('return "a\\u0000b\\ud800é"'), { ok: true, value: 'a\u0000b\ud800é' });
  assert.match(errorOf(evalValue('return 5')), /returned a number/);
  assert.match(errorOf(evalValue('return [1]')), /returned a array/);
  assert.match(errorOf(evalValue("throw new Error('boom')")), /^Error: boom$/);
  assert.match(errorOf(evalValue("throw 'plain'")), /thrown: plain/);
});

test('helpers: seconds_since, second, minute, hour, weekday in UTC', () => {
  const now = new Date(Date.UTC(2026, 10, 21, 13, 45, 30)); // a Saturday
  const ts = Math.floor(now.getTime() / 1000);
  const run = (e: string) => sb.run(sb.define('body', `return String(${e})`), {}, { mode: 'value', now });
  assert.equal(run(`seconds_since(${ts - 90})`), { ok: true, value: '90' });
  assert.equal(run(`second(${ts})`), { ok: true, value: '30' });
  assert.equal(run(`minute(${ts})`), { ok: true, value: '45' });
  assert.equal(run(`hour(${ts})`), { ok: true, value: '13' });
  assert.equal(run(`weekday(${ts})`), { ok: true, value: '6' });
  assert.match(errorOf(run("hour('x')")), /Unix timestamp/);
});

test('scripts: the completion value, var/let/const anew on every run, the input as `entity`', () => {
  const s = new Sandbox({ input: 'entity' });
  const id = s.define(
    'script',
    "var x = 1; let y = 2; const z = 3; function f() { return x + y + z } f() == 6 && entity.name == 'e'",
  );
  for (let i = 0; i < 3; i++)
    assert.equal(s.run(id, { name: 'e' }, { mode: 'true' }), { ok: true, value: true });
  assert.equal(s.run(id, { name: 'x' }, { mode: 'true' }), { ok: true, value: false });
  // `true` mode: only true itself counts.
  assert.equal(s.run(s.define('script', '1'), {}, { mode: 'true' }), { ok: true, value: false });
  assert.match(errorOf(s.run(s.define('script', 'eval("1")'), {}, { mode: 'true' })), /not a function/);
  assert.throws(() => s.define('script', 'return 1'), /script does not compile: SyntaxError/);
  s.dispose();
});

test('syntax errors: define throws naming the line; checkSyntax compiles without running', () => {
  assert.throws(
    () => sb.define('expression', 'event.('),
    (e: unknown) => {
      assert.instance(e, SandboxDefineError);
      assert.match(
        (e as Error).message,
        /^expression does not compile: SyntaxError: .*\(line 1, column \d+\)/,
      );
      return true;
    },
  );
  assert.throws(() => sb.define('body', 'return ('), /function body does not compile/);
  assert.throws(() => sb.define('expression', 'a\u0000b'), /NUL/);
  assert.is(checkSyntax('expression', 'event.check.status == 2'), undefined);
  assert.match(checkSyntax('expression', 'while (true) {}')!, /SyntaxError/);
  assert.match(checkSyntax('expression', '1 +\n\n  ) + 2')!, /SyntaxError.*line 3/);
  assert.is(checkSyntax('body', 'for (;;) {}'), undefined, 'compiled, never run');
  assert.match(checkSyntax('body', 'return (')!, /SyntaxError/);
  assert.is(checkSyntax('script', "entity.system.os == 'linux'", 'entity'), undefined);
  assert.match(checkSyntax('script', 'entity.(', 'entity')!, /SyntaxError/);
  // A regex literal holding a quote (fooled the old text check of lib/js-sandbox.ts).
  assert.is(checkSyntax('expression', `/"/.test('') || (async () => { throw 1 })() || /"/`), undefined);
  // Nesting past the stack limit is a syntax error, not a crash.
  assert.match(checkSyntax('expression', '('.repeat(100000))!, /SyntaxError: stack overflow/);
});

test('endless loops end at the deadline, catch or no catch, and the sandbox goes on', () => {
  assert.match(errorOf(evalValue('while (true) {}')), /timed out after 100 ms/);
  assert.match(errorOf(evalValue('for (;;) { try { for (;;) {} } catch (e) {} }')), /timed out/);
  assert.match(
    errorOf(evalBool('(function f() { try { return f() } catch (e) { while (true) {} } })()')),
    /timed out/,
  );
  assert.match(errorOf(evalValue('throw { get message() { while (true) {} } }')), /timed out/);
  assert.match(errorOf(evalValue('/(a*)*b/.test("a".repeat(40)); return "x"')), /timed out/);
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
  assert.equal(evalValue('return "x"', input, 1000), { ok: true, value: 'x' });
});

test('memory bombs (typed arrays, strings, objects, arrays) end in "out of memory"; the process stays small', () => {
  const rss0 = rssMiB();
  for (const bomb of [
    '(() => { let a = []; for (;;) a.push(new Uint8Array(1e8).fill(1)); })()',
    '(() => { let a = []; for (;;) a.push(new Uint8Array(1e6).fill(1)); })()',
    '(() => { let a = []; for (;;) a.push(new Float64Array(1e5)); })()',
    '(() => { let a = []; for (;;) a.push("x".repeat(1e5) + a.length); })()',
    '(() => { let a = []; for (;;) a.push({ n: a.length }); })()',
    '(() => { let a = []; for (;;) a.push(new Array(1e5).fill(1)); })()',
    '(() => { try { let a = []; for (;;) a.push(new Uint8Array(1e6)); } catch (e) { while (true) {} } })()',
  ]) {
    const r = sb.run(sb.define('expression', bomb), {}, { mode: 'bool', timeoutMs: 3000 });
    assert.match(errorOf(r), /out of memory/, `${bomb}: ${JSON.stringify(r)}`);
    assert.ok(engineStats().memoryBytes <= MODULE_MEMORY.maximumBytes);
    assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true }, `after ${bomb}`);
  }
  const grown = rssMiB() - rss0;
  assert.ok(grown < MODULE_MEMORY.maximumBytes / 1048576 + 64, `RSS grew ${grown} MiB`);
});

test('deep recursion is a stack overflow error; so is deeply nested input', () => {
  assert.match(errorOf(evalBool('(function f() { return f() })()')), /stack overflow/);
  assert.match(errorOf(evalBool('(function f(n) { return [f(n + 1)] })(0)')), /stack overflow/);
  assert.match(
    errorOf(evalValue('let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return String(a)')),
    /stack overflow/,
  );
  let deep: unknown = 1;
  for (let i = 0; i < 5000; i++) deep = [deep];
  assert.match(errorOf(evalBool('true', deep)), /stack overflow|input is not JSON/);
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
});

test('a V8 stack overflow inside WebAssembly drops the module; a new one serves after sandboxReady()', async () => {
  const deep = (n: number, f: () => unknown): unknown => (n === 0 ? f() : deep(n - 1, f));
  let max = 0;
  for (let lo = 0, hi = 200000; lo < hi;) {
    const mid = (lo + hi + 1) >> 1;
    try {
      deep(mid, () => 0);
      lo = mid;
    } catch {
      hi = mid - 1;
    }
    max = lo;
  }
  const s = new Sandbox({ input: 'entity' });
  const nested = s.define('script', '('.repeat(450) + '1' + ')'.repeat(450)); // parsed again by every run
  const plain = s.define('script', 'entity.ok');
  assert.equal(s.run(nested, {}, { mode: 'bool' }), { ok: true, value: true });
  const before = engineStats().poisonings;
  const r = deep(max - 500, () => s.run(nested, {}, { mode: 'bool' })) as SandboxResult;
  assert.match(errorOf(r), /sandbox failure: Maximum call stack size exceeded/);
  assert.is(engineStats().poisonings, before + 1);
  await sandboxReady();
  assert.equal(s.run(plain, { ok: true }, { mode: 'bool' }), { ok: true, value: true });
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true }, 'other sandboxes too');
  s.dispose();
});

test('promises never escape: a promise result is an error, a pending job discards the runtime', () => {
  for (const e of [
    "Promise.reject(new Error('x')), true",
    `/"/.test('') || (async () => { throw 1 })() || /"/`,
    '(async () => true)()',
  ])
    assert.is(evalBool(e).ok, false, e);
  assert.match(errorOf(evalBool('(async () => true)()')), /returned a Promise/);
  assert.match(errorOf(evalBool('(async () => { await 0; for (;;) {} })(), true')), /asynchronous code/);
  assert.match(
    errorOf(evalValue("const p = (async () => {})(); p.then(() => { for (;;) {} }); return 'x'")),
    /asynchronous code/,
  );
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
  assert.is(unhandled, 0, 'nothing reached the host as an unhandled rejection');
});

test('escape attempts: no code generation, no host objects, nothing but the built-ins', () => {
  for (const e of [
    "event.constructor.constructor('return process')()",
    "event.check.constructor.constructor('return process')()",
    "event.list.constructor.constructor('return process')()",
    "seconds_since.constructor('return process')()",
    "(function(){}).constructor('return process')()",
    "(function*(){}).constructor('return process')()",
    "(async function(){}).constructor('return process')()",
    "(async function*(){}).constructor('return process')()",
    "Reflect.construct(Object.getPrototypeOf(function(){}).constructor, ['return 1'])()",
  ])
    assert.match(errorOf(evalBool(e)), /code generation from strings is disabled/, e);
  for (const e of [
    'typeof process',
    'typeof require',
    'typeof module',
    'typeof Buffer',
    'typeof setTimeout',
    'typeof console',
    'typeof eval',
    'typeof Function',
    'typeof Promise',
    'typeof WebAssembly',
    'typeof FinalizationRegistry',
    'typeof WeakRef',
    'typeof Symbol.for',
    'typeof std',
    'typeof os',
    'typeof globalThis.process',
    'typeof (function(){ return this })().process',
  ])
    assert.equal(evalValue(`return ${e}`, {}), { ok: true, value: 'undefined' }, e);
  assert.equal(evalValue('return typeof arguments.callee.caller'), { ok: true, value: 'undefined' });
});

test('the data is frozen and the built-ins too: no pollution reaches the next evaluation', () => {
  assert.equal(evalBool('(event.check.status = 0, event.check.status == 2)'), { ok: true, value: true });
  assert.equal(evalBool('Object.isFrozen(event) && Object.isFrozen(event.check.labels)'), {
    ok: true,
    value: true,
  });
  for (const attack of [
    'Object.prototype.polluted = 1',
    "Object.defineProperty(Object.prototype, 'polluted', { value: 1 })",
    'Array.prototype.polluted = 1',
    'event.__proto__.polluted = 1',
    'event.constructor.prototype.polluted = 1',
    'Object.getPrototypeOf([][Symbol.iterator]()).polluted = 1',
    'globalThis.polluted = 1',
    'JSON.parse = () => ({ polluted: 1 })',
    'Object.setPrototypeOf(event, { polluted: 1 })',
  ]) {
    const r = evalValue(`'use strict'; ${attack}; return 'changed'`);
    assert.is(r.ok, false, `${attack}: ${JSON.stringify(r)}`);
    evalValue(`${attack}; return 'sloppy'`);
    assert.equal(
      evalValue(
        'return String(({}).polluted) + String([].polluted) + typeof polluted + String(event.polluted)',
      ),
      { ok: true, value: 'undefinedundefinedundefinedundefined' },
      attack,
    );
  }
  // JSON input is data: a __proto__ key is an own property, not a prototype.
  const r = evalValue('return String(({}).polluted) + String(event.polluted) + String(Object.keys(event))', {
    ['__proto__']: { polluted: 1 },
  });
  assert.equal(r, { ok: true, value: 'undefinedundefined__proto__' });
  assert.is(({} as Record<string, unknown>).polluted, undefined, 'the host is untouched');
  // Unfrozen input (mutators): each run gets its own copy.
  const m = sb.define(
    'body',
    "event.check.status = 7; event.x = 'y'; return JSON.stringify(event.check.status)",
  );
  for (let i = 0; i < 2; i++)
    assert.equal(sb.run(m, input, { mode: 'value', freeze: false }), { ok: true, value: '7' });
  assert.is(input.check.status, 2);
});

test('separate sandboxes are separate; runAll parses once and stops where told', () => {
  const other = new Sandbox();
  assert.equal(other.run(other.define('body', 'return typeof counter'), {}, { mode: 'value' }), {
    ok: true,
    value: 'undefined',
  });
  const ids = ['event.a == 1', 'event.b == 1', 'event.c == 1'].map((e) => other.define('expression', e));
  assert.equal(other.runAll(ids, { a: 1, b: 2, c: 1 }, { mode: 'bool' }), [
    { ok: true, value: true },
    { ok: true, value: false },
    { ok: true, value: true },
  ]);
  assert.equal(
    other.runAll(ids, { a: 1, b: 2, c: 1 }, { mode: 'bool', stopWhen: (r) => !r.ok || r.value !== true }),
    [
      { ok: true, value: true },
      { ok: true, value: false },
    ],
  );
  other.dispose();
  assert.match(errorOf(other.run(ids[0]!, {}, { mode: 'bool' })), /no such definition/);
});

// How fast a reused context is: bench/sandbox.ts.
test('a reused context answers each run from its own input', () => {
  const id = sb.define('expression', "event.check.status != 0 && event.entity.metadata.name == 'e1'");
  for (let i = 0; i < 2000; i++) {
    const status = i % 3;
    assert.equal(sb.run(id, { ...input, check: { ...input.check, status } }, { mode: 'bool' }), {
      ok: true,
      value: status !== 0,
    });
  }
});

test('libraries run before the code, at global scope, and are frozen with the built-ins', () => {
  const lib = new Sandbox({
    libraries: [
      {
        name: 'a/x.js',
        source: 'var LIMIT = { n: 1 }; function over(e) { return e.check.status > LIMIT.n; }',
      },
      // A library that replaces what the freeze uses does not stop the freeze.
      {
        name: 'a/y.js',
        source: 'WeakSet = function () {}; WeakSet.prototype.has = function () { return true; };',
      },
    ],
  });
  const run = (expr: string) => lib.run(lib.define('expression', expr), input, { mode: 'true' });
  assert.equal(run('over(event)'), { ok: true, value: true });
  assert.equal(run('(LIMIT.n = 5, LIMIT.n === 1)'), { ok: true, value: true });
  assert.equal(run('Object.isFrozen(globalThis) && Object.isFrozen(Array.prototype)'), {
    ok: true,
    value: true,
  });
  assert.equal(run('typeof eval === "undefined"'), { ok: true, value: true });
  lib.dispose();
});

test('a library that throws, never ends or starts async code fails every definition, naming the file', () => {
  for (const [source, error] of [
    ['throw new TypeError("nope")', 'library b/x.js failed: TypeError: nope'],
    ['for (;;) {}', 'library b/x.js failed: it ran out of time'],
    ['(async () => { await 0; })()', 'library b/x.js failed: it started asynchronous code'],
  ]) {
    const bad = new Sandbox({ libraries: [{ name: 'b/x.js', source: source! }] });
    assert.throws(
      () => bad.define('expression', 'true'),
      (e: Error) => e.message === error,
    );
    bad.dispose();
  }
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
});

test.run();
