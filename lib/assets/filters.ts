// Asset filters are JavaScript over `entity` (e.g. `entity.system.os == 'linux'`) that must give
// `true`. They come from the backend and run in the sandbox (lib/sandbox): QuickJS with its own
// memory, stack and time limits, the entity going in as frozen JSON data. A filter that does not
// compile, throws, runs out of time or memory, or answers a promise does not match: the asset (or
// that build) is not installed.
//
// The sandbox module (and QuickJS with it) is imported by `ready`, the first time some asset has
// filters: most agents never have any, and loading it costs an idle agent memory for good
// (docs/operations.md#agent-memory).
import type { Sandbox } from '../sandbox/index.ts';
import type { Logger } from '../log.ts';

type SandboxModule = typeof import('../sandbox/index.ts');

const TIMEOUT_MS = 100;
/** Sources kept compiled; past this the sandbox starts afresh. */
const MAX_SOURCES = 256;

/** The asset filters of one asset manager: one sandbox, each source compiled once. */
export class AssetFilters {
  private sandbox: Sandbox | undefined;
  private module: SandboxModule | undefined;
  private readonly defined = new Map<string, { id?: number; error?: string }>();

  constructor(private readonly log: Logger) {}

  /** Loads the sandbox when any of these assets has filters (an agent without them never does). */
  async ready(filters: Iterable<readonly string[] | null | undefined>): Promise<void> {
    for (const f of filters) {
      if (f && f.length > 0) {
        this.module ??= await import('../sandbox/index.ts');
        return this.module.sandboxReady();
      }
    }
  }

  /** True when every filter gives `true` for `entity`; none given is true. */
  all(filters: readonly string[] | null | undefined, entity: unknown, what: string): boolean {
    if (!filters || filters.length === 0) return true;
    const ids: number[] = [];
    for (const f of filters) {
      const d = this.define(f);
      if (d.id === undefined) return this.failed(what, f, d.error!);
      ids.push(d.id);
    }
    const runs = this.sandbox!.runAll(ids, entity ?? null, {
      mode: 'true',
      timeoutMs: TIMEOUT_MS,
      stopWhen: (r) => !r.ok || r.value !== true,
    });
    const last = runs[runs.length - 1]!;
    if (!last.ok) return this.failed(what, filters[runs.length - 1]!, last.error);
    return runs.length === ids.length && last.value === true;
  }

  /** Frees the sandbox. */
  dispose(): void {
    this.sandbox?.dispose();
    this.sandbox = undefined;
    this.defined.clear();
  }

  private define(source: string): { id?: number; error?: string } {
    let d = this.defined.get(source);
    if (d) return d;
    // `ready` was not awaited first: answered now, tried again next time.
    if (!this.module) return { error: 'the sandbox is not loaded' };
    if (this.defined.size >= MAX_SOURCES) this.dispose();
    this.sandbox ??= new this.module.Sandbox({ input: 'entity' });
    try {
      d = { id: this.sandbox.define('script', source) };
    } catch (err) {
      // Not loaded: answered now, tried again next time.
      if (err instanceof this.module.SandboxUnavailableError) return { error: err.message };
      d = { error: (err as Error).message };
    }
    this.defined.set(source, d);
    return d;
  }

  private failed(what: string, filter: string, error: string): false {
    this.log.warn('asset filter failed; treated as not matching', { asset: what, filter, error });
    return false;
  }
}
