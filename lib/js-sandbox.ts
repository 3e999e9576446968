import * as vm from 'node:vm';
import { isProxy } from 'node:util/types';

// One sandbox for user JavaScript (filter expressions, javascript mutators). node:vm is no hard
// security boundary, so the rules are strict:
// - no host object ever enters the context: inputs go in as JSON strings and are parsed inside, so
//   `event.constructor.constructor` is the context's Function, which reaches no process/require;
// - only primitives come out: user code runs inside a wrapper that turns its result and any thrown
//   value into a string or boolean while still under the time limit. A host that read a property of
//   a context object could run a user getter with no time limit (an endless loop would hang us);
// - the context's intrinsics are frozen, so a context can be reused for many events of the same
//   filter or mutator without one run changing what the next one sees;
// - no code generation from strings (eval, new Function) and microtasks run inside the time limit.

const DEFAULT_TIMEOUT_MS = 100;

const SETUP = `(() => {
  'use strict';
  const g = globalThis;
  const seen = new WeakSet();
  const harden = (o) => {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) return;
    seen.add(o);
    try { Object.freeze(o); } catch (_) { /* the global object and exotic objects refuse; their globals are fixed below */ }
    harden(Object.getPrototypeOf(o));
    for (const k of Reflect.ownKeys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, k);
      if (!d) continue;
      if ('value' in d) harden(d.value); else { harden(d.get); harden(d.set); }
    }
  };
  const freeze = (o) => {
    if (o && typeof o === 'object') { for (const k of Object.keys(o)) freeze(o[k]); Object.freeze(o); }
    return o;
  };
  const ts = (name, t) => {
    if (typeof t !== 'number' || !isFinite(t)) throw new TypeError(name + ' needs a Unix timestamp in seconds');
    return new Date(t * 1000);
  };
  const helpers = {
    seconds_since: (t) => Math.trunc((g.__now - ts('seconds_since', t).getTime()) / 1000),
    second: (t) => ts('second', t).getUTCSeconds(),
    minute: (t) => ts('minute', t).getUTCMinutes(),
    hour: (t) => ts('hour', t).getUTCHours(),
    weekday: (t) => ts('weekday', t).getUTCDay(),
  };
  const fns = [];
  const describe = (e) => {
    try {
      if (e && typeof e === 'object' && typeof e.message === 'string') return String(e.name || 'Error') + ': ' + e.message;
      return 'thrown: ' + String(e);
    } catch (_) { return 'an unprintable value was thrown'; }
  };
  const define = (fn) => { if (typeof fn !== 'function') throw new TypeError('not a function'); fns.push(fn); return fns.length - 1; };
  // Results: 'b1'/'b0' truthiness, 's<text>' a string, 'n' null or undefined, 't<type>' anything else,
  // 'e<message>' an error.
  const run = () => {
    try {
      const fn = fns[g.__i];
      let input = JSON.parse(g.__json);
      if (g.__freeze) input = freeze(input);
      const r = fn(input, helpers.seconds_since, helpers.second, helpers.minute, helpers.hour, helpers.weekday);
      if (g.__mode === 'bool') return r ? 'b1' : 'b0';
      if (typeof r === 'string') return 's' + r;
      if (r === null || r === undefined) return 'n';
      return 't' + (Array.isArray(r) ? 'array' : typeof r);
    } catch (e) { return 'e' + describe(e); }
  };
  // Rejected promises and finalizer callbacks reach the host's isolate-wide trackers outside any
  // time limit (an unhandled rejection would end the process), so nothing that makes them is left;
  // V8's console talks to the inspector, which user code has no business with.
  for (const k of ['Promise', 'WebAssembly', 'Atomics', 'SharedArrayBuffer', 'FinalizationRegistry', 'WeakRef', 'console']) delete g[k];
  for (const k of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, k);
    if (d && 'value' in d) harden(d.value);
  }
  Object.defineProperty(g, '__define', { value: define, writable: false, configurable: false });
  Object.defineProperty(g, '__run', { value: run, writable: false, configurable: false });
  // The host writes the input slots; they stay plain data properties, so a host write can never
  // call a user setter. Every other global is fixed.
  const slots = ['__json', '__i', '__now', '__mode', '__freeze'];
  const gopd = Object.getOwnPropertyDescriptor, dp = Object.defineProperty;
  for (const k of Reflect.ownKeys(g)) {
    const d = gopd(g, k);
    if (!d || !d.configurable || !('value' in d)) continue;
    dp(g, k, { value: d.value, writable: slots.includes(k), enumerable: d.enumerable, configurable: false });
  }
})()`;

const setupScript = new vm.Script(SETUP, { filename: 'sandbox-setup.js' });
const runScript = new vm.Script('__run()', { filename: 'sandbox-run.js' });

const scripts = new Map<string, vm.Script>();
/** Scripts are compiled once per source; the cache is bounded so changing filters cannot grow it forever. */
function compile(src: string): vm.Script {
  let s = scripts.get(src);
  if (!s) {
    s = new vm.Script(src, { filename: 'user.js' });
    if (scripts.size >= 1000) scripts.delete(scripts.keys().next().value!);
    scripts.set(src, s);
  }
  return s;
}

type SandboxResult = { ok: true; value: boolean | string | null } | { ok: false; error: string };

/**
 * One hardened V8 context with user functions defined in it. `expression` is a JavaScript
 * expression over `event` (its truthiness is the result); `body` is a function body with `event` in
 * scope whose return value must be a string, null or undefined.
 */
export class JsSandbox {
  private readonly ctx: vm.Context;
  private readonly sandbox: Record<string, unknown>;

  constructor() {
    this.sandbox = { __json: 'null', __i: 0, __now: 0, __mode: 'bool', __freeze: true };
    this.ctx = vm.createContext(this.sandbox, {
      codeGeneration: { strings: false, wasm: false },
      microtaskMode: 'afterEvaluate',
    });
    setupScript.runInContext(this.ctx, { timeout: 1000 });
  }

  /** Compiles user code into this context; a syntax error is thrown as an Error with a clear message. */
  define(kind: 'expression' | 'body', source: string): number {
    const src =
      kind === 'expression'
        ? `__define(function (event, seconds_since, second, minute, hour, weekday) { return (\n${source}\n); })`
        : `__define(function (event, seconds_since, second, minute, hour, weekday) {\n${source}\n})`;
    const banned = forbiddenKeyword(source);
    if (banned)
      throw new Error(`${banned} is not available in the sandbox (async code could outlive the time limit)`);
    let script: vm.Script;
    try {
      script = compile(src);
    } catch (err) {
      throw new Error(
        `${kind === 'expression' ? 'expression' : 'function body'} does not compile: ${(err as Error).message}`,
      );
    }
    const id = script.runInContext(this.ctx, { timeout: DEFAULT_TIMEOUT_MS });
    if (typeof id !== 'number') throw new Error('user code replaced the function definition');
    return id;
  }

  /**
   * Runs a defined function over `input` (JSON-able). `mode` bool gives the truthiness; `value`
   * gives a string, or null for null/undefined, and an error for other types. Never throws.
   */
  run(
    id: number,
    input: unknown,
    opts: { mode: 'bool' | 'value'; now?: Date; timeoutMs?: number; freeze?: boolean },
  ): SandboxResult {
    const s = this.sandbox;
    try {
      s.__json = JSON.stringify(input ?? null);
      s.__i = id;
      s.__now = (opts.now ?? new Date()).getTime();
      s.__mode = opts.mode;
      s.__freeze = opts.freeze ?? true;
    } catch (err) {
      return { ok: false, error: `input is not JSON: ${(err as Error).message}` };
    }
    let out: unknown;
    try {
      out = runScript.runInContext(this.ctx, {
        timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        displayErrors: false,
      });
    } catch (err) {
      // Only the time limit reaches here (user throws are caught inside); its message is read as a
      // plain data property so that nothing of the context can run.
      if (isProxy(err) || typeof err !== 'object' || err === null)
        return { ok: false, error: 'sandbox failure' };
      const m = Object.getOwnPropertyDescriptor(err, 'message')?.value;
      return { ok: false, error: typeof m === 'string' ? m : 'sandbox failure' };
    } finally {
      s.__json = 'null';
    }
    if (typeof out !== 'string' || out.length === 0)
      return { ok: false, error: 'sandbox returned no result' };
    const tag = out[0];
    const rest = out.slice(1);
    switch (tag) {
      case 'b':
        return { ok: true, value: rest === '1' };
      case 's':
        return { ok: true, value: rest };
      case 'n':
        return { ok: true, value: null };
      case 't':
        return { ok: false, error: `returned a ${rest}; a string, null or undefined is expected` };
      default:
        return { ok: false, error: rest };
    }
  }
}

/**
 * `async`, `await` or `import` used as code (strings and comments do not count). Promises are the
 * one way for user code to run after its time limit, and without eval every use is spelled out.
 */
export function forbiddenKeyword(source: string): string | undefined {
  let code = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      code += ' ';
      i = j;
    } else if (c === '/' && source[i + 1] === '/') {
      const j = source.indexOf('\n', i);
      i = j < 0 ? source.length : j;
      code += ' ';
    } else if (c === '/' && source[i + 1] === '*') {
      const j = source.indexOf('*/', i + 2);
      i = j < 0 ? source.length : j + 1;
      code += ' ';
    } else code += c;
  }
  return /\b(async|await|import)\b/.exec(code)?.[1];
}
