// suite-timeout: 60
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { mutate, DEFAULT_JS_MUTATOR_TIMEOUT_MS } from '../../actors/pipeline/mutators/index.ts';
import type { ExecContext, MutatorRef, MutatorSpec } from '../../actors/pipeline/types.ts';

const lines: string[] = [];
const ctx: ExecContext = {
  log: createLogger('debug', {}, (l) => lines.push(l)),
  baseEnv: { PATH: process.env.PATH },
  assets: async () => ({ env: {} }),
};
const event = {
  entity: { metadata: { name: 'web-1', namespace: 'default' }, entity_class: 'agent' },
  check: { metadata: { name: 'disk' }, status: 2, output: 'DISK CRITICAL: 97%\n' },
} as unknown as Event;
const js = (evalSrc: string, timeout?: number, name = `m-${Math.random()}`): MutatorRef => ({
  kind: 'resource',
  mutator: {
    metadata: { name, namespace: 'default' },
    type: 'javascript',
    eval: evalSrc,
    timeout,
  } as MutatorSpec,
});
const text = async (ref: MutatorRef | undefined, e: Event = event) =>
  (await mutate(ref, e, 'default', ctx)).toString();

test('default and json: the JSON event', async () => {
  assert.equal(JSON.parse(await text(undefined)), event);
  assert.equal(JSON.parse(await text({ kind: 'builtin', name: 'json' })), event);
});

test('only_check_output: the raw output, empty without one', async () => {
  assert.is(await text({ kind: 'builtin', name: 'only_check_output' }), 'DISK CRITICAL: 97%\n');
  assert.is(
    await text({ kind: 'builtin', name: 'only_check_output' }, { entity: event.entity } as Event),
    '',
  );
});

test('javascript: a returned string is the payload', async () => {
  assert.is(await text(js("return event.check.metadata.name + ':' + event.check.status")), 'disk:2');
  assert.is(
    await text(
      js(
        "var e = event; e.check.output = 'changed'; e.extra = 1; return JSON.stringify(e.check.output) + e.extra",
      ),
    ),
    '"changed"1',
  );
  assert.is(event.check!.output, 'DISK CRITICAL: 97%\n', 'the event itself is untouched');
  assert.is(await text(js("return ''")), '');
});

test('javascript: null or undefined mean the JSON event', async () => {
  assert.equal(JSON.parse(await text(js('return null'))), event);
  assert.equal(JSON.parse(await text(js('var x = 1;'))), event);
});

test('javascript: other return types, throws and syntax errors are clear errors', async () => {
  for (const [src, re] of [
    ['return 1', /returned a number/],
    ['return { a: 1 }', /returned a object/],
    ['return true', /returned a boolean/],
    ["throw new Error('nope')", /Error: nope/],
    ['return event.missing.field', /TypeError/],
    ['return (', /does not compile: SyntaxError/],
    ['await 1', /does not compile: SyntaxError/],
    ["return event.constructor.constructor('return process')()", /code generation from strings is disabled/],
    ["return (async () => 'x')()", /returned a Promise/],
    ["(async () => { await 0; for (;;) {} })(); return 'x'", /asynchronous code is not supported/],
    [
      'return new Uint8Array(1e6).fill(1) && (() => { const a = []; for (;;) a.push(new Uint8Array(1e6).fill(1)); })()',
      /out of memory/,
    ],
    ['return (function f() { return f() })()', /stack overflow/],
  ] as const) {
    try {
      await text(js(src, undefined, 'bad'));
      assert.unreachable(src);
    } catch (err) {
      assert.instance(err, Error);
      assert.match((err as Error).message, /^mutator bad/, src);
      assert.match((err as Error).message, re, src);
    }
  }
});

test('javascript: endless loops end at the time limit (default and mutator timeout)', async () => {
  try {
    await text(js('while (true) {}'));
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, new RegExp(`timed out after ${DEFAULT_JS_MUTATOR_TIMEOUT_MS} ms`));
  }
  try {
    await text(js('for (;;) {}', 1));
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, /timed out after 1000 ms/);
  }
  assert.is(await text(js("return 'still working'")), 'still working');
});

// How fast a reused context is: bench/sandbox.ts and the tcp-js kind of bench/pipeline.ts.
test('javascript: one mutator over many events answers each from its own event and carries nothing from one to the next', async () => {
  const ref = js('return String(event.check.status) + ":" + event.entity.metadata.name');
  for (let i = 0; i < 200; i++) {
    const e = {
      ...event,
      entity: { ...event.entity, metadata: { ...event.entity!.metadata, name: `e${i}` } },
    };
    assert.is(await text(ref, e as Event), `2:e${i}`);
  }
  // A change a run makes to its event or to the globals is gone at the next run of the same mutator.
  const marks = js('var before = String(event.check.seen); event.check.seen = true; return before');
  for (let i = 0; i < 3; i++) assert.is(await text(marks), 'undefined', `run ${i}`);
  // The globals are frozen: the assignment is ignored, so no count builds up across events.
  const counter = js('globalThis.n = (globalThis.n || 0) + 1; return String(globalThis.n)');
  for (let i = 0; i < 3; i++) assert.is(await text(counter), 'undefined', `run ${i}`);
});

test('pipe: the command gets the JSON event on stdin and its stdout is the payload', async () => {
  const ref: MutatorRef = {
    kind: 'resource',
    mutator: {
      metadata: { name: 'upper', namespace: 'default' },
      type: 'pipe',
      command: "tr 'a-z' 'A-Z'",
      timeout: 10,
    } as MutatorSpec,
  };
  assert.is(await text(ref), JSON.stringify(event).toUpperCase());
});

test.run();
