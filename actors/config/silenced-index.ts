import { configKeys } from '../../proto/names.ts';
import type { SilencedEntry } from '../../proto/schemas/resources/silenced.ts';
import type { ConfigStore } from './store.ts';

const EMPTY: readonly SilencedEntry[] = [];

/**
 * A namespace's silenced entries for the per-event match, grouped once per ConfigStore
 * generation instead of scanning every config key for every event.
 */
export class SilencedIndex {
  private byNs = new Map<string, SilencedEntry[]>();
  private generation = -1;

  constructor(private readonly config: ConfigStore) {}

  forNamespace(ns: string): readonly SilencedEntry[] {
    if (this.generation !== this.config.generation) this.rebuild();
    return this.byNs.get(ns) ?? EMPTY;
  }

  /** Deletes an entry (expire_on_resolve); false when it was already gone. */
  async remove(ns: string, name: string): Promise<boolean> {
    return this.config.remove(configKeys.namespaced('silenced', ns, name));
  }

  private rebuild(): void {
    this.generation = this.config.generation;
    const byNs = new Map<string, SilencedEntry[]>();
    const prefix = configKeys.prefix('silenced');
    for (const e of this.config.entries<SilencedEntry>(prefix)) {
      if (!e.value || typeof e.value !== 'object' || !e.value.metadata) continue;
      // The key (<prefix><ns>/<name>) is authoritative for the namespace, not the body.
      const rest = e.key.slice(prefix.length);
      const ns = rest.slice(0, rest.indexOf('/'));
      let list = byNs.get(ns);
      if (!list) byNs.set(ns, (list = []));
      list.push(e.value);
    }
    this.byNs = byNs;
  }
}
