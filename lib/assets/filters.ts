// Asset filters are JavaScript expressions over `entity` (e.g. `entity.system.os == 'linux'`).
// They come from the backend, so they run in a fresh V8 context that holds nothing but a frozen copy
// of the entity, created inside that context: objects made in our realm would hand out our
// `Function` constructor (and through it `process`) via `entity.constructor.constructor`.
import * as vm from 'node:vm';
import type { Logger } from '../log.ts';

const TIMEOUT_MS = 100;

const SETUP = `(() => {
  const freeze = (o) => { if (o && typeof o === 'object') { Object.values(o).forEach(freeze); Object.freeze(o); } return o; };
  Object.defineProperty(globalThis, 'entity', { value: freeze(JSON.parse(globalThis.__entity)), writable: false, configurable: false, enumerable: true });
  delete globalThis.__entity;
})()`;

export class FilterContext {
  private readonly ctx: vm.Context;

  constructor(
    entity: unknown,
    private readonly log: Logger,
  ) {
    this.ctx = vm.createContext(
      { __entity: JSON.stringify(entity ?? null) },
      {
        codeGeneration: { strings: false, wasm: false },
        microtaskMode: 'afterEvaluate',
      },
    );
    vm.runInContext(SETUP, this.ctx, { timeout: TIMEOUT_MS });
  }

  /** True when every expression evaluates to `true`; an expression that throws or times out does not match. */
  all(filters: readonly string[] | null | undefined, what: string): boolean {
    for (const f of filters ?? []) {
      if (!this.one(f, what)) return false;
    }
    return true;
  }

  private one(expr: string, what: string): boolean {
    try {
      return vm.runInContext(expr, this.ctx, { timeout: TIMEOUT_MS, displayErrors: false }) === true;
    } catch (err) {
      this.log.warn('asset filter failed; treated as not matching', {
        asset: what,
        filter: expr,
        error: String((err as Error)?.message ?? err),
      });
      return false;
    }
  }
}
