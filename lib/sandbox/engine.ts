// The QuickJS WebAssembly module of this process: loaded once (asynchronously: WebAssembly compiles
// off the event loop), shared by every sandbox. Each sandbox makes its own QuickJS runtime in it.
//
// Memory. QuickJS's own limit (JS_SetMemoryLimit) hardly works in this WebAssembly build: it counts
// only a fixed overhead per allocation (the build cannot tell an allocation's size), so it stops a
// single allocation above the limit but not a million smaller ones, typed arrays and strings
// included. The real limits are here, on the module's WebAssembly memory, which is ours:
// - it can never grow past MODULE_MEMORY.maximumBytes, whatever runs in it;
// - while an evaluation runs, the memory may grow by at most that evaluation's budget (the
//   sandbox's memory limit). A refused growth makes QuickJS's allocation fail: an "out of memory"
//   error for that evaluation, whose runtime is then thrown away, which frees what it took.
// WebAssembly memory never shrinks, so the most a process keeps is the largest it grew to.
//
// Failures. A host-level exception out of a QuickJS call (V8's own stack overflow inside
// WebAssembly, a trap) can leave the module's memory half-updated: its shadow stack pointer is not
// restored, so every later call starts lower on a stack QuickJS no longer measures right. Such a
// module is never used again: `poison` drops it, the sandboxes notice the new generation and let
// their runtimes go without touching the old memory, and a fresh module loads.
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import variantExport from '@jitl/quickjs-wasmfile-release-sync';

// The package's types describe its CommonJS build, whose default export TypeScript sees as the
// module itself; under ESM the default export is the variant.
const variant = ((variantExport as { default?: unknown }).default ?? variantExport) as QuickJSSyncVariant;

/** The part of WebAssembly.Memory used here (the project's types have no WebAssembly namespace). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const { WebAssembly: Wasm } = globalThis as unknown as {
  WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => WasmMemory };
};

const PAGE = 64 * 1024;

export const MODULE_MEMORY = {
  /** What the build starts with. */
  initialBytes: 16 * 1024 * 1024,
  /** All sandboxes of the process together: runtimes (~0.2 MB each) and the evaluation running. */
  maximumBytes: 128 * 1024 * 1024,
} as const;

export interface Engine {
  readonly module: QuickJSWASMModule;
  /** Bumped for each module loaded: a runtime of an older generation is gone. */
  readonly generation: number;
  readonly memory: WasmMemory;
}

let current: Engine | undefined;
let loading: Promise<void> | undefined;
let generation = 0;
let poisonings = 0;
/** Bytes the memory may still grow by during the evaluation running now; undefined: no evaluation. */
let budget: number | undefined;
/** A growth was refused during the evaluation running now. */
let refused = false;

/** A memory whose growth the budget of the running evaluation limits. */
function boundedMemory(): WasmMemory {
  const memory = new Wasm.Memory({
    initial: MODULE_MEMORY.initialBytes / PAGE,
    maximum: MODULE_MEMORY.maximumBytes / PAGE,
  });
  const grow = memory.grow.bind(memory);
  // Emscripten grows the memory through this method and takes an exception as "no memory".
  Object.defineProperty(memory, 'grow', {
    value: (pages: number) => {
      if (budget !== undefined && pages * PAGE > budget) {
        refused = true;
        throw new RangeError('over the memory limit of the evaluation');
      }
      let r: number;
      try {
        r = grow(pages);
      } catch (err) {
        refused = true;
        throw err;
      }
      if (budget !== undefined) budget -= pages * PAGE;
      return r;
    },
  });
  return memory;
}

/**
 * Resolves once the module is loaded (at once when it is). The first call starts loading it;
 * programs await it during their start so that the synchronous sandbox calls find it ready.
 */
export function sandboxReady(): Promise<void> {
  if (current) return Promise.resolve();
  if (!loading) {
    const memory = boundedMemory();
    loading = newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory: memory as never })).then(
      (module) => {
        current = { module, generation: ++generation, memory };
        loading = undefined;
      },
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    );
  }
  return loading;
}

/** The loaded module, or undefined while it loads (a load is started then). */
export function engine(): Engine | undefined {
  if (!current) sandboxReady().catch(() => {});
  return current;
}

/**
 * Runs `f` (one evaluation) with the module's memory allowed to grow by `bytes` at most; `exhausted`
 * tells whether a growth was refused meanwhile (QuickJS then failed an allocation: out of memory,
 * whatever the evaluation made of it, even when it could not make an error object of it).
 */
export function withMemoryBudget<T>(bytes: number, f: () => T): { value: T; exhausted: boolean } {
  const outer = { budget, refused };
  budget = bytes;
  refused = false;
  try {
    const value = f();
    return { value, exhausted: refused };
  } finally {
    budget = outer.budget;
    refused = outer.refused;
  }
}

/** Drops the module of `gen` after a host-level failure inside it, and loads a new one. */
export function poison(gen: number): void {
  if (current?.generation !== gen) return;
  current = undefined;
  poisonings++;
  sandboxReady().catch(() => {});
}

/** How many modules were dropped after a host-level failure, and the current memory size. */
export function engineStats(): { poisonings: number; memoryBytes: number } {
  return { poisonings, memoryBytes: current?.memory.buffer.byteLength ?? 0 };
}
