import type { Context } from 'hono';
import { listed } from './http.ts';

/**
 * Legacy views of stored records, made once per stored version and kept as long as that version is:
 * the read model parses a record once and replaces the object on every change, so a view keyed by
 * that object is never stale and goes with it. A dashboard polling `/events` then costs a filter and
 * a page, not a conversion of every event (bench/legacy.ts measured 200 req/s saturating a node
 * without it).
 */
export class ViewCache<T extends object, V extends object> {
  private readonly views = new WeakMap<T, V>();
  private readonly texts = new WeakMap<V, string>();

  constructor(private readonly make: (item: T) => V) {}

  view(item: T): V {
    let v = this.views.get(item);
    if (v === undefined) {
      v = this.make(item);
      this.views.set(item, v);
    }
    return v;
  }

  private text(view: V): string {
    let t = this.texts.get(view);
    if (t === undefined) {
      t = JSON.stringify(view);
      this.texts.set(view, t);
    }
    return t;
  }

  /** The views of `items`, filtered and paged as any legacy list (`listed`), answered as JSON text. */
  list(c: Context, items: readonly T[]): Response {
    const page = listed(
      c,
      items.map((i) => this.view(i)),
    );
    c.header('Content-Type', 'application/json');
    return c.body(`[${page.map((v) => this.text(v)).join(',')}]`, 200);
  }
}
