// The JavaScript that sets up each sandbox context, run once per context before any user code. It
// evaluates to the functions the host calls (kept as host handles, never put on the global
// object, so user code cannot reach or replace them):
//   run(id, mode, nowMs, json, freeze, keep)  one evaluation; answers a tagged string (below).
//                                      json undefined: the input of the previous run again; keep
//                                      false: the input is let go afterwards; id -1 only lets go
//   define(fn)                         keeps a compiled user function; answers its id
//   script(src)                        keeps a script's wrapped source (run by a direct eval); its id
//   load(src)                          runs a JavaScript library at global scope (a filter's runtime
//                                      assets), after code generation is gone and before the freeze
//   seal()                             freezes the global object and every built-in; called once,
//                                      after the libraries, before any user code is defined
//
// What user code finds: the standard built-ins of QuickJS, all frozen, and the global object frozen
// too, so nothing one evaluation does is seen by the next and nothing survives it (no retained memory
// between evaluations); no eval, no Function constructor (every function constructor's `constructor`
// throws), no Promise global, WeakRef, FinalizationRegistry or Symbol registry; the input, parsed
// from JSON inside the context (so every object is of this context), frozen unless the host asks
// otherwise; the Sensu helpers seconds_since, second, minute, hour, weekday. QuickJS has no timers,
// console, process or module loader in a bare context.
//
// Results: 'b1'/'b0' a boolean, 's<JSON string>' a string, 'n' null or undefined, 't<type>' another type,
// 'p' a promise (asynchronous code is refused), 'e<message>' an error thrown by user code.

/** Modes of `run`: truthiness, `=== true`, or a value (string, null or undefined). */
export const MODE = { bool: 0, true: 1, value: 2 } as const;

/**
 * The expression the host evaluates once per context. `input` names the input: the first parameter
 * of expressions and function bodies, a variable in scope of scripts.
 */
export function prelude(input: string): string {
  if (!/^[A-Za-z_$][\w$]*$/.test(input)) throw new Error(`sandbox input name ${input} is no identifier`);
  return `(function () {
  'use strict';
  const g = globalThis;
  // Scripts run in a direct eval inside a function of their own (sloppy, made here while eval still
  // exists): a completion value as a result, var, let and const new on each run, the input in scope.
  // The host starts each script's text by shadowing eval (lib/sandbox/index.ts, wrap).
  const scriptRunner = (0, g.eval)('(function (eval) { return function (${input}, $$source) { return eval($$source); }; })')(g.eval);
  const PromiseCtor = g.Promise;
  const parse = JSON.parse, stringify = JSON.stringify;
  const freeze = Object.freeze, keys = Object.keys;
  const getProto = Object.getPrototypeOf, defineProperty = Object.defineProperty;
  const ownKeys = Reflect.ownKeys, getOwn = Object.getOwnPropertyDescriptor;
  const isArray = Array.isArray, isFiniteNumber = Number.isFinite, trunc = Math.trunc;
  const DateCtor = Date;
  // What the freeze uses, taken before any library runs: a library may replace the globals.
  const apply = Reflect.apply, globalEval = g.eval;
  const WeakSetCtor = WeakSet, wsHas = WeakSet.prototype.has, wsAdd = WeakSet.prototype.add;

  let now = 0;
  let input;
  const fns = [];

  const ts = (name, t) => {
    if (typeof t !== 'number' || !isFiniteNumber(t)) throw new TypeError(name + ' needs a Unix timestamp in seconds');
    return new DateCtor(t * 1000);
  };
  const seconds_since = (t) => trunc((now - ts('seconds_since', t).getTime()) / 1000);
  const second = (t) => ts('second', t).getUTCSeconds();
  const minute = (t) => ts('minute', t).getUTCMinutes();
  const hour = (t) => ts('hour', t).getUTCHours();
  const weekday = (t) => ts('weekday', t).getUTCDay();

  // Parsed JSON holds plain objects and arrays only: no getters run here. As deep as the parse was.
  const freezeDeep = (o) => {
    freeze(o);
    const ks = keys(o);
    for (let i = 0; i < ks.length; i++) {
      const v = o[ks[i]];
      if (typeof v === 'object' && v !== null) freezeDeep(v);
    }
    return o;
  };
  const describe = (e) => {
    try {
      if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
        const n = e.name;
        return (typeof n === 'string' && n ? n : 'Error') + ': ' + e.message;
      }
      return 'thrown: ' + String(e);
    } catch (_) {
      return 'an unprintable value was thrown';
    }
  };

  const run = (i, mode, nowMs, json, freezeInput, keep) => {
    if (i < 0) {
      input = undefined;
      return 'n';
    }
    try {
      return evaluate(i, mode, nowMs, json, freezeInput);
    } finally {
      if (!keep) input = undefined;
    }
  };
  const evaluate = (i, mode, nowMs, json, freezeInput) => {
    try {
      now = nowMs;
      if (json !== undefined) {
        input = undefined;
        const parsed = parse(json);
        input = freezeInput && typeof parsed === 'object' && parsed !== null ? freezeDeep(parsed) : parsed;
      }
      const f = fns[i];
      let r;
      if (typeof f === 'string') r = scriptRunner(input, f);
      else if (typeof f === 'function') {
        r = f(input, seconds_since, second, minute, hour, weekday);
      } else return 'eno such definition';
      if (r instanceof PromiseCtor) return 'p';
      if (mode === ${MODE.bool}) return r ? 'b1' : 'b0';
      if (mode === ${MODE.true}) return r === true ? 'b1' : 'b0';
      if (typeof r === 'string') return 's' + stringify(r);
      if (r === null || r === undefined) return 'n';
      return 't' + (isArray(r) ? 'array' : typeof r);
    } catch (e) {
      return 'e' + describe(e);
    }
  };
  const define = (f) => {
    if (typeof f !== 'function') throw new TypeError('the definition is not a function');
    freeze(f);
    if (f.prototype) freeze(f.prototype);
    fns.push(f);
    return fns.length - 1;
  };
  const script = (src) => {
    fns.push(String(src));
    return fns.length - 1;
  };

  // No code generation from strings: eval goes, and each kind of function's constructor throws.
  const noCodegen = function () {
    throw new EvalError('code generation from strings is disabled in the sandbox');
  };
  for (const f of [function () {}, function* () {}, async function () {}, async function* () {}])
    defineProperty(getProto(f), 'constructor', { value: noCodegen, writable: false, configurable: false });
  for (const k of ['eval', 'Function', 'Promise', 'WeakRef', 'FinalizationRegistry', 'SharedArrayBuffer', 'Atomics'])
    delete g[k];
  delete Symbol.for;
  delete Symbol.keyFor;
  const seen = new WeakSetCtor();
  const harden = (o) => {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || apply(wsHas, seen, [o])) return;
    apply(wsAdd, seen, [o]);
    freeze(o);
    harden(getProto(o));
    const ks = ownKeys(o);
    for (let i = 0; i < ks.length; i++) {
      const d = getOwn(o, ks[i]);
      if (!d) continue;
      if ('value' in d) harden(d.value);
      else {
        harden(d.get);
        harden(d.set);
      }
    }
  };
  // The intrinsics the global object does not name (iterator and generator prototypes, the function
  // kinds, Promise), through instances of them: made now, before a library could change how.
  const intrinsics = [
    noCodegen, PromiseCtor,
    function* () {}, async function () {}, async function* () {}, (function* () {})(), (async function* () {})(),
    [][Symbol.iterator](), new Map().entries(), new Set().values(), ''[Symbol.iterator](), /a/g[Symbol.matchAll](''),
  ];
  let sealed = false;
  // A library's top-level declarations become globals, frozen with the rest by seal().
  const load = (src) => {
    if (sealed) throw new TypeError('libraries are loaded before the context is sealed');
    globalEval(String(src));
  };
  // The global object and everything reachable from it, then the intrinsics.
  const seal = () => {
    sealed = true;
    harden(g);
    for (let i = 0; i < intrinsics.length; i++) harden(intrinsics[i]);
  };
  return { run, define, script, load, seal };
})()`;
}
