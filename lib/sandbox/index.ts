// One sandbox for all user JavaScript: event filter expressions, javascript mutators, proxy
// entity_attributes and asset filters (docs/architecture.md#user-javascript). User code runs in
// QuickJS compiled to WebAssembly, never in V8: its objects, its memory and its stack are not ours.
// Each Sandbox owns a QuickJS runtime (memory limit, stack limit, an interrupt deadline per
// evaluation) with one context that is reused for every evaluation of the code defined in it.
// Only data crosses: the input goes in as JSON text, and a tagged string comes out. Any error,
// time-out or exhaustion is a result for that evaluation, never an exception of this process; after
// a time-out, memory exhaustion or a pending promise job the runtime is thrown away and made anew.
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { engine, poison, sandboxReady, withMemoryBudget } from './engine.ts';
import { MODE } from './prelude.ts';

import {
  ModuleFailure,
  OUT_OF_MEMORY,
  disposeVm,
  errorText,
  isExhaustion,
  newVm,
  type Library,
  type Vm,
} from './vm.ts';

export { sandboxReady, type Library };

/**
 * `expression`: a JavaScript expression over the input (filters); `body`: a function body with the
 * input in scope whose return value is the result (mutators); `script`: a script whose completion
 * value is the result, the input in scope (proxy entity_attributes, asset filters).
 */
type SourceKind = 'expression' | 'body' | 'script';

/** An evaluation's answer; `timedOut` marks an error that is the time limit. */
export type SandboxResult =
  { ok: true; value: boolean | string | null } | { ok: false; error: string; timedOut?: true };

/**
 * `bool`: the truthiness; `true`: whether it is `true` itself; `value`: a string, or null for null or
 * undefined (another type is an error).
 */
type SandboxMode = keyof typeof MODE;

interface RunOptions {
  mode: SandboxMode;
  /** The clock of the helpers (seconds_since); now by default. */
  now?: Date;
  /** The time limit of each evaluation. */
  timeoutMs?: number;
  /** Freeze the input (the default); an unfrozen input is parsed anew for each evaluation. */
  freeze?: boolean;
}

interface SandboxOptions {
  /** Name of the input: `event` (the default) or `entity`. */
  input?: string;
  memoryLimitBytes?: number;
  /**
   * JavaScript libraries run at global scope in every context of this sandbox before its user code
   * (a filter's runtime assets): their declarations are globals the code can use, frozen with the
   * rest. One that fails makes every definition and evaluation answer its error.
   */
  libraries?: readonly Library[];
}

/** The limits every sandbox runs under unless told otherwise. */
const SANDBOX_LIMITS = {
  /** QuickJS's own allocations, typed array and string contents included. */
  memoryLimitBytes: 32 * 1024 * 1024,
  /**
   * QuickJS's stack limit. Kept small: QuickJS measures the WebAssembly shadow stack, while each of
   * its frames also takes several times as much of V8's native stack, which is the host's (~1 MB);
   * 32 KiB leaves ~170 nested user function calls and keeps the parser's deepest recursion within
   * ~750 KB of V8 stack. A V8 stack overflow inside the module still ends nothing but the module.
   */
  stackBytes: 32 * 1024,
  timeoutMs: 100,
  /** The time limit of each library's load, once per context. */
  libraryTimeoutMs: 1000,
  /** The largest input, as JSON. */
  inputBytes: 8 * 1024 * 1024,
} as const;

/** Time for the prelude of a new context (hardening every built-in takes a few ms). */
const PRELUDE_TIMEOUT_MS = 2000;
const HELPERS = 'seconds_since, second, minute, hour, weekday';
const FILENAME = 'user.js';

/** The code compiled for a user source of a kind; the source starts on line 2. */
function wrap(kind: SourceKind, source: string, input: string): string {
  switch (kind) {
    case 'expression':
      return `(function (${input}, ${HELPERS}) { return (\n${source}\n); })`;
    case 'body':
      return `(function (${input}, ${HELPERS}) {\n${source}\n})`;
    case 'script':
      // Run by a direct eval inside a function that has eval in scope: shadowed first.
      return `let eval;\n${source}\n`;
  }
}

// QuickJS takes source text as C strings: a NUL would end it early.
const NUL = 'SyntaxError: a NUL character is not allowed in the source';

const WHAT: Record<SourceKind, string> = {
  expression: 'expression',
  body: 'function body',
  script: 'script',
};

/** User code that does not compile, or could not be defined. */
export class SandboxDefineError extends Error {}

/** The module is not loaded (yet, or again after a failure): nothing can be compiled or run now. */
export class SandboxUnavailableError extends Error {
  constructor() {
    super('the JavaScript sandbox is not loaded yet');
  }
}

/**
 * A QuickJS runtime and context with user code defined in it. `define` compiles; `run` and
 * `runAll` evaluate over an input and never throw. Synchronous: the module must be loaded
 * (`await sandboxReady()` during start); before it is, definitions throw SandboxUnavailableError
 * and evaluations answer an error.
 */
export class Sandbox {
  private vm: Vm | undefined;
  private readonly defs: { kind: SourceKind; source: string }[] = [];
  private deadline = 0;
  private readonly input: string;
  private readonly memory: number;
  private readonly libraries: readonly Library[];
  private disposed = false;

  constructor(opts: SandboxOptions = {}) {
    this.input = opts.input ?? 'event';
    this.memory = opts.memoryLimitBytes ?? SANDBOX_LIMITS.memoryLimitBytes;
    this.libraries = opts.libraries ?? [];
  }

  /**
   * Compiles user code into this sandbox; its id. Throws a SandboxDefineError naming the problem
   * (`expression does not compile: SyntaxError: ...`), or SandboxUnavailableError.
   */
  define(kind: SourceKind, source: string): number {
    if (source.includes('\0')) throw new SandboxDefineError(`${WHAT[kind]} does not compile: ${NUL}`);
    try {
      const vm = this.ensure();
      if (!vm) throw new SandboxUnavailableError();
      const id = this.defineIn(vm, kind, source);
      this.defs.push({ kind, source });
      vm.ids.push(id);
      return this.defs.length - 1;
    } catch (err) {
      // The module was dropped (a new one is loading): to be defined again later.
      if (err instanceof ModuleFailure) throw new SandboxUnavailableError();
      throw err;
    }
  }

  /** One evaluation of a definition over `input` (JSON data). Never throws. */
  run(id: number, input: unknown, opts: RunOptions): SandboxResult {
    return this.runAll([id], input, opts)[0]!;
  }

  /**
   * Evaluations of several definitions over one input, in order, each under its own time limit; a
   * frozen input is parsed once for all of them. With `stopWhen`, the evaluations end after the
   * first result it accepts (the answer is shorter then). Never throws.
   */
  runAll(
    ids: readonly number[],
    input: unknown,
    opts: RunOptions & { stopWhen?: (r: SandboxResult) => boolean },
  ): SandboxResult[] {
    const freeze = opts.freeze ?? true;
    let json: string;
    try {
      json = JSON.stringify(input ?? null);
    } catch (err) {
      return ids.map(() => ({ ok: false, error: `input is not JSON: ${(err as Error).message}` }));
    }
    if (json.length > SANDBOX_LIMITS.inputBytes)
      return ids.map(() => ({
        ok: false,
        error: `input is over ${SANDBOX_LIMITS.inputBytes} bytes of JSON`,
      }));
    const nowMs = (opts.now ?? new Date()).getTime();
    const timeoutMs = opts.timeoutMs ?? SANDBOX_LIMITS.timeoutMs;
    const out: SandboxResult[] = [];
    // The context that holds the parsed input now (a frozen input is shared by the evaluations).
    let holding: Vm | undefined;
    for (const [i, id] of ids.entries()) {
      const r = this.evaluate(id, (vm) => {
        const reuse = freeze && holding === vm;
        const keep = freeze && i < ids.length - 1;
        const result = this.call(
          vm,
          vm.ids[id]!,
          opts.mode,
          nowMs,
          reuse ? undefined : json,
          freeze,
          keep,
          timeoutMs,
        );
        holding = keep && this.vm === vm ? vm : undefined;
        return result;
      });
      out.push(r);
      if (opts.stopWhen?.(r)) break;
    }
    // Stopped early: the context lets go of the input (a sandbox keeps nothing between uses).
    if (holding && this.vm === holding)
      this.call(holding, -1, 'bool', nowMs, undefined, false, false, timeoutMs);
    return out;
  }

  /** One evaluation of definition `id` by `f` in the current context, or the reason there is none. */
  private evaluate(id: number, f: (vm: Vm) => SandboxResult): SandboxResult {
    if (this.disposed || !Number.isInteger(id) || id < 0 || id >= this.defs.length)
      return { ok: false, error: 'no such definition in this sandbox' };
    let vm: Vm | undefined;
    try {
      vm = this.ensure();
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    if (!vm)
      return {
        ok: false,
        error: engine()
          ? 'the sandbox could not set up its definitions'
          : new SandboxUnavailableError().message,
      };
    if (vm.ids[id]! < 0) return { ok: false, error: 'the definition failed in a new context' };
    return f(vm);
  }

  /** Frees the runtime; the sandbox answers errors afterwards. */
  dispose(): void {
    this.disposed = true;
    this.drop();
  }

  private drop(): void {
    const vm = this.vm;
    this.vm = undefined;
    if (vm && engine()?.generation === vm.generation) disposeVm(vm);
  }

  /** The current context, made (with every definition) when there is none; undefined while the module loads. */
  private ensure(): Vm | undefined {
    if (this.disposed) return undefined;
    const e = engine();
    if (this.vm && this.vm.generation !== e?.generation) this.vm = undefined; // an old module: let go
    if (this.vm || !e) return this.vm;
    this.deadline = Date.now() + PRELUDE_TIMEOUT_MS;
    const vm = newVm(
      e,
      { memory: this.memory, stack: SANDBOX_LIMITS.stackBytes },
      this.input,
      () => Date.now() > this.deadline,
      {
        list: this.libraries,
        beforeEach: () => {
          this.deadline = Date.now() + SANDBOX_LIMITS.libraryTimeoutMs;
        },
      },
    );
    this.vm = vm;
    for (const d of this.defs) {
      let id = -1;
      // A definition that fails now (it did not when first defined) answers errors in this context;
      // one that exhausts it leaves no context at all (undefined) until the next try.
      if (this.vm === vm)
        try {
          id = this.defineIn(vm, d.kind, d.source);
        } catch (err) {
          if (err instanceof ModuleFailure) throw err;
        }
      vm.ids.push(id);
    }
    return this.vm;
  }

  private defineIn(vm: Vm, kind: SourceKind, source: string): number {
    const { ctx, rt } = vm;
    const what = WHAT[kind];
    const code = wrap(kind, source, this.input);
    this.deadline = Date.now() + SANDBOX_LIMITS.timeoutMs;
    const handles: QuickJSHandle[] = [];
    const fail = (prefix: string, err: QuickJSHandle, exhausted = false) => {
      handles.push(err);
      const msg = exhausted ? OUT_OF_MEMORY : errorText(ctx, err);
      if (exhausted || isExhaustion(msg) || /interrupted/.test(msg)) this.reset(vm, handles);
      return new SandboxDefineError(
        `${what} ${/^SyntaxError/.test(msg) ? 'does not compile' : prefix}: ${msg}`,
      );
    };
    try {
      let r: ReturnType<QuickJSContext['callFunction']>;
      if (kind === 'script') {
        // Compiled here (the compiled form is dropped), and again by each run's eval.
        const { value: c, exhausted } = withMemoryBudget(this.memory, () =>
          ctx.evalCode(code, FILENAME, { type: 'global', compileOnly: true }),
        );
        if (c.error) throw fail('does not compile', c.error, exhausted);
        c.value.dispose();
        if (exhausted) {
          this.reset(vm, handles);
          throw new SandboxDefineError(`${what} could not be defined: ${OUT_OF_MEMORY}`);
        }
        const src = ctx.newString(code);
        handles.push(src);
        r = ctx.callFunction(vm.script, ctx.undefined, src);
      } else {
        // Text that closes the wrapper early runs here, under the time limit, in this context only.
        const { value: f, exhausted } = withMemoryBudget(this.memory, () =>
          ctx.evalCode(code, FILENAME, { type: 'global' }),
        );
        if (f.error) throw fail('could not be defined', f.error, exhausted);
        if (exhausted) {
          handles.push(f.value);
          this.reset(vm, handles);
          throw new SandboxDefineError(`${what} could not be defined: ${OUT_OF_MEMORY}`);
        }
        handles.push(f.value);
        r = ctx.callFunction(vm.define, ctx.undefined, f.value);
      }
      if (r.error) throw fail('could not be defined', r.error);
      handles.push(r.value);
      if (rt.hasPendingJob()) {
        this.reset(vm, handles);
        throw new SandboxDefineError(`${what} could not be defined: it started asynchronous code`);
      }
      return ctx.getNumber(r.value);
    } catch (err) {
      if (err instanceof SandboxDefineError) throw err;
      this.vm = undefined;
      poison(vm.generation);
      throw new ModuleFailure(`sandbox failure: ${(err as Error)?.message ?? String(err)}`);
    } finally {
      if (this.vm === vm) for (const h of handles) if (h.alive) h.dispose();
    }
  }

  /** Throws the runtime away (after its handles); the next use makes a new one. */
  private reset(vm: Vm, handles: QuickJSHandle[] = []): void {
    if (this.vm !== vm) return;
    this.vm = undefined;
    try {
      for (const h of handles) if (h.alive) h.dispose();
    } catch {
      poison(vm.generation);
      return;
    }
    disposeVm(vm);
  }

  private call(
    vm: Vm,
    vmId: number,
    mode: SandboxMode,
    nowMs: number,
    json: string | undefined,
    freeze: boolean,
    keep: boolean,
    timeoutMs: number,
  ): SandboxResult {
    const { ctx, rt } = vm;
    const handles: QuickJSHandle[] = [];
    try {
      const args = [
        ctx.newNumber(vmId),
        ctx.newNumber(MODE[mode]),
        ctx.newNumber(nowMs),
        json === undefined ? ctx.undefined : ctx.newString(json),
        freeze ? ctx.true : ctx.false,
        keep ? ctx.true : ctx.false,
      ];
      handles.push(...args);
      this.deadline = Date.now() + timeoutMs;
      const { value: r, exhausted } = withMemoryBudget(this.memory, () =>
        ctx.callFunction(vm.run, ctx.undefined, ...args),
      );
      if (r.error) {
        // Only QuickJS's own errors get past the wrapper: the interrupt, or exhaustion in the wrapper.
        handles.push(r.error);
        this.deadline = 0;
        const msg = errorText(ctx, r.error);
        this.reset(vm, handles);
        if (exhausted) return { ok: false, error: OUT_OF_MEMORY };
        if (/interrupted/.test(msg))
          return { ok: false, error: `timed out after ${timeoutMs} ms`, timedOut: true };
        return { ok: false, error: msg };
      }
      handles.push(r.value);
      if (exhausted) {
        // Even when user code caught it (or QuickJS had no memory left for an error object).
        this.reset(vm, handles);
        return { ok: false, error: OUT_OF_MEMORY };
      }
      const tag = ctx.getString(r.value);
      if (rt.hasPendingJob()) {
        this.reset(vm, handles);
        return {
          ok: false,
          error: 'asynchronous code is not supported: a promise job was left pending (it never runs)',
        };
      }
      const result = decode(tag);
      if (!result.ok && isExhaustion(result.error)) this.reset(vm, handles);
      return result;
    } catch (err) {
      this.vm = undefined;
      poison(vm.generation);
      return { ok: false, error: `sandbox failure: ${(err as Error)?.message ?? String(err)}` };
    } finally {
      if (this.vm === vm) for (const h of handles) if (h.alive) h.dispose();
    }
  }
}

function decode(tag: string): SandboxResult {
  const rest = tag.slice(1);
  switch (tag[0]) {
    case 'b':
      return { ok: true, value: rest === '1' };
    case 's':
      return { ok: true, value: JSON.parse(rest) as string };
    case 'n':
      return { ok: true, value: null };
    case 't':
      return { ok: false, error: `returned a ${rest}; a string, null or undefined is expected` };
    case 'p':
      return { ok: false, error: 'returned a Promise: asynchronous code is not supported' };
    case 'e':
      return { ok: false, error: rest };
    default:
      return { ok: false, error: 'the sandbox returned no result' };
  }
}

let checker: { vm: Vm; deadline: number } | undefined;

/**
 * Whether user code of a kind compiles, without running any of it: undefined when it does, else
 * the error (`SyntaxError: unexpected token in expression: ')' (line 1, column 4)`). Throws
 * SandboxUnavailableError while the module is not loaded (await sandboxReady() first).
 */
export function checkSyntax(kind: SourceKind, source: string, input = 'event'): string | undefined {
  if (source.includes('\0')) return NUL;
  const e = engine();
  if (!e) throw new SandboxUnavailableError();
  if (checker && checker.vm.generation !== e.generation) checker = undefined;
  if (!checker) {
    const c: { vm?: Vm; deadline: number } = { deadline: Date.now() + PRELUDE_TIMEOUT_MS };
    try {
      c.vm = newVm(
        e,
        { memory: SANDBOX_LIMITS.memoryLimitBytes, stack: SANDBOX_LIMITS.stackBytes },
        input,
        () => Date.now() > c.deadline,
      );
    } catch {
      throw new SandboxUnavailableError();
    }
    checker = c as { vm: Vm; deadline: number };
  }
  const { vm } = checker;
  checker.deadline = Date.now() + 1000;
  try {
    const { value: r, exhausted } = withMemoryBudget(SANDBOX_LIMITS.memoryLimitBytes, () =>
      vm.ctx.evalCode(wrap(kind, source, input), FILENAME, { type: 'global', compileOnly: true }),
    );
    const msg = r.error ? errorText(vm.ctx, r.error) : undefined;
    (r.error ?? r.value).dispose();
    if (exhausted || (msg && isExhaustion(msg) && !/^SyntaxError/.test(msg))) {
      disposeVm(vm);
      checker = undefined;
    }
    return exhausted ? `${OUT_OF_MEMORY} (compiling it)` : msg;
  } catch {
    checker = undefined;
    poison(vm.generation);
    throw new SandboxUnavailableError();
  }
}
