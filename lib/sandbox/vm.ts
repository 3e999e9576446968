import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import { poison, withMemoryBudget, type Engine } from './engine.ts';
import { prelude } from './prelude.ts';

// One QuickJS runtime with its context and the prelude's entry points (docs/architecture.md#user-javascript):
// made, read from and thrown away here; a host-level failure poisons the module so nothing of it is touched
// again.

export interface Vm {
  generation: number;
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  run: QuickJSHandle;
  define: QuickJSHandle;
  script: QuickJSHandle;
  load: QuickJSHandle;
  seal: QuickJSHandle;
  /** The context's id of each definition of the sandbox; -1 when it failed in this context. */
  ids: number[];
}

/** A host-level failure of a QuickJS call: the module is dropped, nothing of it is touched again. */
export class ModuleFailure extends Error {}

/** A JavaScript library of the context (a filter's runtime asset file), run before its user code. */
export interface Library {
  /** For errors: `<asset>/<path in the asset>`. */
  name: string;
  source: string;
}

/** A library that failed to load: the context is not made, and its code answers this error. */
class LibraryError extends Error {}

/** Runtime, context and prelude in a module; a host-level failure poisons the module. */
export function newVm(
  e: Engine,
  limits: { memory: number; stack: number },
  input: string,
  interrupt: () => boolean,
  libraries: { list: readonly Library[]; beforeEach: () => void } = { list: [], beforeEach: () => {} },
): Vm {
  let rt: QuickJSRuntime | undefined;
  try {
    rt = e.module.newRuntime();
    rt.setMemoryLimit(limits.memory);
    rt.setMaxStackSize(limits.stack);
    rt.setInterruptHandler(interrupt);
    const ctx = rt.newContext();
    const r = ctx.evalCode(prelude(input), 'sandbox-prelude.js', { type: 'global', strict: true });
    if (r.error) {
      const msg = errorText(ctx, r.error);
      r.error.dispose();
      ctx.dispose();
      rt.dispose();
      throw new Error(`the sandbox prelude failed: ${msg}`);
    }
    const fns = r.value;
    const vm: Vm = {
      generation: e.generation,
      rt,
      ctx,
      run: ctx.getProp(fns, 'run'),
      define: ctx.getProp(fns, 'define'),
      script: ctx.getProp(fns, 'script'),
      load: ctx.getProp(fns, 'load'),
      seal: ctx.getProp(fns, 'seal'),
      ids: [],
    };
    fns.dispose();
    for (const lib of libraries.list) {
      libraries.beforeEach();
      const src = ctx.newString(lib.source);
      const { value: l, exhausted } = withMemoryBudget(limits.memory, () =>
        ctx.callFunction(vm.load, ctx.undefined, src),
      );
      src.dispose();
      const failure = l.error ? errorText(ctx, l.error) : exhausted ? OUT_OF_MEMORY : undefined;
      (l.error ?? l.value).dispose();
      if (failure === undefined && !rt.hasPendingJob()) continue;
      disposeVm(vm);
      throw new LibraryError(
        `library ${lib.name} failed: ${failure === undefined ? 'it started asynchronous code' : /interrupted/.test(failure) ? 'it ran out of time' : failure}`,
      );
    }
    const sealed = ctx.callFunction(vm.seal, ctx.undefined);
    if (sealed.error) {
      const msg = errorText(ctx, sealed.error);
      sealed.error.dispose();
      disposeVm(vm);
      throw new Error(`the sandbox prelude failed: ${msg}`);
    }
    sealed.value.dispose();
    return vm;
  } catch (err) {
    if (err instanceof LibraryError) throw err;
    if (err instanceof Error && err.message.startsWith('the sandbox prelude failed')) throw err;
    poison(e.generation);
    throw new ModuleFailure(`sandbox failure: ${(err as Error)?.message ?? String(err)}`);
  }
}

/** Frees a context and its runtime; a failure there poisons the module. */
export function disposeVm(vm: Vm): void {
  try {
    vm.run.dispose();
    vm.define.dispose();
    vm.script.dispose();
    vm.load.dispose();
    vm.seal.dispose();
    vm.ctx.dispose();
    vm.rt.dispose();
  } catch {
    poison(vm.generation);
  }
}

/**
 * The message of an error QuickJS returned (a QuickJS error object: the wrapper of `run` catches
 * what user code throws, so what escapes is QuickJS's own: interrupted, out of memory). Reads plain
 * properties only.
 */
export function errorText(ctx: QuickJSContext, err: QuickJSHandle): string {
  if (ctx.typeof(err) !== 'object') return 'thrown: ' + String(ctx.typeof(err));
  const read = (k: string) => {
    const h = ctx.getProp(err, k);
    try {
      return ctx.typeof(h) === 'string' ? ctx.getString(h) : undefined;
    } finally {
      h.dispose();
    }
  };
  const name = read('name') ?? 'Error';
  const message = read('message') ?? '';
  const at = /user\.js:(\d+)(?::(\d+))?/.exec(read('stack') ?? '');
  const where = at ? ` (line ${Math.max(1, Number(at[1]) - 1)}${at[2] ? `, column ${at[2]}` : ''})` : '';
  return `${name}: ${message}${where}`;
}

export const OUT_OF_MEMORY = 'InternalError: out of memory';
export const isExhaustion = (msg: string) => /out of memory|stack overflow/.test(msg);
