// @ts-check
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';

/** Items asked for per request: a page the windowed table shows at once without effort. */
const PAGE_SIZE = 500;
/** The most a page may ask for (the URL's `limit`). */
const MAX_PAGE_SIZE = 5000;

/**
 * The page size a URL's `limit` asks for, else the default.
 * @param {string} text
 */
export function pageSizeOf(text) {
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? Math.min(n, MAX_PAGE_SIZE) : PAGE_SIZE;
}

/**
 * @template T
 * @typedef {(o: { limit: number, continue: string | undefined, signal: AbortSignal }) =>
 *   Promise<{ items: T[], continue: string | undefined }>} PageLoader
 */

/**
 * @template T
 * @typedef {{
 *   items: T[],
 *   more: boolean,
 *   loading: boolean,
 *   error: unknown,
 *   version: number,
 *   loadMore: () => void,
 *   loadAll: () => void,
 *   stop: () => void,
 *   reload: () => void,
 * }} Paged
 */

/**
 * A server-paged list (`limit`/`continue`, `pageSize` items a page): the first page when `deps` change, then "load more" (the
 * next page appended) or "load all" (pages until the last, stoppable). `reload()` lists again as many
 * items as are shown, so a refresh does not lose the pages loaded. `version` changes whenever the
 * list starts over (new filters, a reload), so what is derived from the items can start over too.
 * @template T
 * @param {PageLoader<T>} load
 * @param {unknown[]} deps
 * @param {number} [pageSize]
 * @returns {Paged<T>}
 */
export function usePaged(load, deps, pageSize = PAGE_SIZE) {
  const [state, setState] = useState(
    /** @type {{ items: T[], next: string | undefined, loading: boolean, error: unknown, version: number }} */ ({
      items: [],
      next: undefined,
      loading: true,
      error: undefined,
      version: 0,
    }),
  );
  const latest = useRef(load);
  latest.current = load;
  const current = useRef(state);
  current.current = state;
  const ctl = useRef(/** @type {AbortController | null} */ (null));

  const run = useCallback(async (/** @type {{ reset: boolean, limit: number, all: boolean }} */ o) => {
    ctl.current?.abort();
    const c = new AbortController();
    ctl.current = c;
    let token = o.reset ? undefined : current.current.next;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    let fresh = o.reset;
    /** @type {T[]} */
    let items = o.reset ? [] : current.current.items;
    try {
      do {
        const page = await latest.current({ limit: o.limit, continue: token, signal: c.signal });
        if (c.signal.aborted) return;
        items = [...items, ...page.items];
        token = page.continue;
        const done = !o.all || !token;
        const bump = fresh;
        fresh = false;
        setState((s) => ({ ...s, items, next: token, loading: !done, version: s.version + (bump ? 1 : 0) }));
      } while (o.all && token && !c.signal.aborted);
    } catch (error) {
      if (c.signal.aborted) return;
      setState((s) => ({ ...s, loading: false, error }));
    }
  }, []);

  useEffect(() => {
    void run({ reset: true, limit: pageSize, all: false });
    return () => ctl.current?.abort();
  }, [...deps, pageSize]);

  return {
    items: state.items,
    more: state.next !== undefined,
    loading: state.loading,
    error: state.error,
    version: state.version,
    loadMore: () => void run({ reset: false, limit: pageSize, all: false }),
    loadAll: () => void run({ reset: false, limit: Math.max(pageSize, PAGE_SIZE), all: true }),
    stop: () => {
      ctl.current?.abort();
      setState((s) => ({ ...s, loading: false }));
    },
    reload: () =>
      void run({
        reset: true,
        limit: Math.max(pageSize, current.current.items.length),
        all: false,
      }),
  };
}

/**
 * The line under a paged list: how many are shown, and the buttons to page on.
 * @param {{ list: Paged<unknown>, what: string }} p
 */
export function PageBar({ list, what }) {
  const n = list.items.length;
  return html`<div class="res-pagebar">
    <span role="status" aria-live="polite">
      ${list.loading ? `Loading ${what}… ${n || ''}` : `${n} ${what}${list.more ? ' loaded, more on the server' : ''}`}
    </span>
    ${
      list.more &&
      !list.loading &&
      html`<button type="button" onClick=${list.loadMore}>Load more</button>
        <button type="button" onClick=${list.loadAll}>Load all</button>`
    }
    ${list.loading && n > 0 && html`<button type="button" onClick=${list.stop}>Stop</button>`}
  </div>`;
}
