// suite-timeout: 60
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsSandbox, forbiddenKeyword } from '../../lib/js-sandbox.ts';

const sb = new JsSandbox();
const input = {
  check: { status: 2, executed: 0, labels: { a: 'b' } },
  entity: { metadata: { name: 'e1' } },
  list: [1, 2],
};
const evalBool = (expr: string, value: unknown = input) =>
  sb.run(sb.define('expression', expr), value, { mode: 'bool', timeoutMs: 100 });
const evalValue = (body: string, value: unknown = input) =>
  sb.run(sb.define('body', body), value, { mode: 'value', timeoutMs: 100 });
const hostAlive = () => {
  assert.type(process.pid, 'number');
  assert.is(typeof (globalThis as Record<string, unknown>).__json, 'undefined');
};

test('expressions see the event and give their truthiness', () => {
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
  assert.equal(evalBool("event.check.labels.a === 'c'"), { ok: true, value: false });
  assert.equal(evalBool('event.list.length'), { ok: true, value: true });
  assert.equal(evalBool('event.missing'), { ok: true, value: false });
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
  assert.equal(run('weekday(0)'), { ok: true, value: '4' });
  const bad = run("hour('x')");
  assert.is(bad.ok, false);
  assert.match((bad as { error: string }).error, /Unix timestamp/);
});

test('the event is frozen: an expression cannot change what the next one sees', () => {
  assert.equal(evalBool('(event.check.status = 0, event.check.status == 2)'), { ok: true, value: true });
  assert.equal(evalBool('Object.isFrozen(event.check.labels)'), { ok: true, value: true });
});

test('values: strings, null/undefined, other types are errors, throws become messages', () => {
  assert.equal(evalValue("return 'x' + event.check.status"), { ok: true, value: 'x2' });
  assert.equal(evalValue('return null'), { ok: true, value: null });
  assert.equal(evalValue(''), { ok: true, value: null });
  assert.match(JSON.stringify(evalValue('return 5')), /returned a number/);
  assert.match(JSON.stringify(evalValue('return {}')), /returned a object/);
  assert.match(JSON.stringify(evalValue('return [1]')), /returned a array/);
  assert.match(JSON.stringify(evalValue("throw new Error('boom')")), /Error: boom/);
  assert.match(JSON.stringify(evalValue("throw 'plain'")), /thrown: plain/);
  assert.throws(() => sb.define('expression', 'event.('), /does not compile/);
});

test('escape attempts through constructors, this, globalThis fail', () => {
  for (const e of [
    "event.constructor.constructor('return process')()",
    "event.check.constructor.constructor('return process')()",
    "event.list.constructor.constructor('return process')()",
    "seconds_since.constructor('return process')()",
    "(function(){}).constructor('return process')()",
    "(function*(){}).constructor('return process')()",
    "eval('process')",
  ]) {
    const r = evalBool(e);
    assert.is(r.ok, false, e);
    assert.match((r as { error: string }).error, /Code generation from strings disallowed|EvalError/, e);
  }
  for (const e of [
    'typeof process',
    'typeof require',
    'typeof module',
    'typeof Buffer',
    'typeof setTimeout',
    'typeof console',
    'typeof globalThis.process',
    'typeof this.process',
    'typeof (function(){ return this })().process',
    'typeof Promise',
    'typeof WebAssembly',
    'typeof FinalizationRegistry',
  ]) {
    assert.equal(
      sb.run(sb.define('body', `return ${e}`), {}, { mode: 'value' }),
      { ok: true, value: 'undefined' },
      e,
    );
  }
  hostAlive();
});

test('prepareStackTrace, Proxy, getters and redefined slots cannot run code outside the time limit', () => {
  // Error is frozen: the hook cannot be installed, stacks stay strings.
  assert.equal(
    evalValue('Error.prepareStackTrace = function (e, s) { return s; }; return typeof new Error().stack'),
    { ok: true, value: 'string' },
  );
  assert.equal(evalValue('return String(Object.isFrozen(Object.prototype) && Object.isFrozen(Error))'), {
    ok: true,
    value: 'true',
  });
  // A thrown object with a looping getter: it is described inside, under the time limit.
  assert.match(JSON.stringify(evalValue('throw { get message() { while (true) {} } }')), /timed out/);
  // A Proxy result: its truthiness is taken inside; the host never touches it.
  assert.equal(evalBool('new Proxy({}, { get() { while (true) {} } })'), { ok: true, value: true });
  assert.match(JSON.stringify(evalValue('return { toString() { while (true) {} } }')), /returned a object/);
  // The host's input slots cannot become accessors.
  assert.match(
    JSON.stringify(evalValue("Object.defineProperty(globalThis, '__json', { set() { while (true) {} } })")),
    /Cannot redefine/,
  );
  assert.match(
    JSON.stringify(evalValue("Object.defineProperty(globalThis, '__run', { value: 1 })")),
    /Cannot redefine/,
  );
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
  hostAlive();
});

test('endless loops end with a time-out error and the sandbox keeps working', () => {
  const t0 = Date.now();
  const r = evalValue('while (true) {}');
  assert.is(r.ok, false);
  assert.match((r as { error: string }).error, /timed out/);
  assert.match(JSON.stringify(evalValue('for (;;) { [].concat([1]) }')), /timed out/);
  assert.match(
    JSON.stringify(evalBool('(function f() { try { return f() } catch (e) { while (true) {} } })()')),
    /timed out/,
  );
  console.log(`three endless loops ended in ${Date.now() - t0} ms`);
  assert.equal(evalBool('event.check.status == 2'), { ok: true, value: true });
});

test('async code and import() are refused before they run (promises could outlive the limit)', () => {
  assert.throws(
    () => sb.define('expression', '(async () => { while (true) { await 1 } })()'),
    /async is not available/,
  );
  assert.throws(() => sb.define('expression', "import('fs')"), /import is not available/);
  assert.throws(() => sb.define('body', 'function* g() {} ; await 1'), /await is not available/);
  // Only code counts: strings and comments may say these words.
  assert.is(forbiddenKeyword("event.check.name == 'import-job' // async await"), undefined);
  assert.is(forbiddenKeyword('"await \\" async" /* import */ + 1'), undefined);
  assert.equal(evalBool("event.check.name != 'async'"), { ok: true, value: true });
  hostAlive();
});

test('state changes are confined to the context, and separate sandboxes are separate', () => {
  assert.equal(
    evalValue('Object.prototype.polluted = 1; Array.prototype.x = 2; return String(({}).polluted)'),
    { ok: true, value: 'undefined' },
  );
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  const other = new JsSandbox();
  sb.run(sb.define('body', 'globalThis.counter = 41'), {}, { mode: 'value' });
  assert.equal(other.run(other.define('body', 'return typeof counter'), {}, { mode: 'value' }), {
    ok: true,
    value: 'undefined',
  });
});

test.run();
