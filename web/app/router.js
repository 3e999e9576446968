// @ts-check
import { signal } from '@preact/signals';

/**
 * Pages live after `#` (`#/events?status=2&sort=severity`), so every view, with its filters, sort
 * and page, is a URL that can be shared and survives a reload, and no path of the API is taken.
 * @typedef {{ path: string, params: URLSearchParams }} Route
 */

export const DEFAULT_PATH = '/events';

/**
 * @public (the shared router's surface, for pages and tests that read a hash)
 * @param {string} hash
 * @returns {Route}
 */
export function parse(hash) {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const path = (q < 0 ? raw : raw.slice(0, q)) || DEFAULT_PATH;
  return { path, params: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

/** The current page. */
export const route = signal(parse(location.hash));
addEventListener('hashchange', () => {
  route.value = parse(location.hash);
});

/**
 * @param {string} path
 * @param {URLSearchParams | Record<string, string | undefined>} [params]
 */
export function href(path, params) {
  const p = params instanceof URLSearchParams ? new URLSearchParams(params) : new URLSearchParams();
  if (!(params instanceof URLSearchParams))
    for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') p.set(k, v);
  const qs = p.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

/**
 * Goes to a page. `replace` rewrites the current history entry (a filter being typed), else a new
 * entry is pushed (back returns to the previous view).
 * @param {string} path
 * @param {URLSearchParams | Record<string, string | undefined>} [params]
 * @param {{ replace?: boolean }} [o]
 */
export function navigate(path, params, o = {}) {
  const h = href(path, params);
  if (h === location.hash) return;
  if (o.replace) history.replaceState(history.state, '', h);
  else history.pushState(history.state, '', h);
  route.value = parse(h);
}

/**
 * Changes some parameters of the current page, keeping the others; undefined or '' removes one.
 * @param {Record<string, string | undefined>} changes
 * @param {{ replace?: boolean }} [o]
 */
export function setParams(changes, o = { replace: true }) {
  const { path, params } = route.peek();
  const p = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '') p.delete(k);
    else p.set(k, v);
  }
  navigate(path, p, o);
}

/**
 * Matches a path against a pattern like `/events/:entity/:check`; parts are URI-decoded.
 * @param {string} pattern
 * @param {string} path
 * @returns {Record<string, string> | undefined}
 */
export function match(pattern, path) {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  /** @type {Record<string, string>} */
  const out = {};
  for (let i = 0; i < want.length; i++) {
    const w = /** @type {string} */ (want[i]);
    const g = /** @type {string} */ (got[i]);
    if (w.startsWith(':')) {
      if (!g) return undefined;
      try {
        out[w.slice(1)] = decodeURIComponent(g);
      } catch {
        return undefined;
      }
    } else if (w !== g) return undefined;
  }
  return out;
}

/**
 * A path from parts, each URI-encoded: `pathOf('/events', entity, check)`.
 * @param {string} base
 * @param {...string} parts
 */
export const pathOf = (base, ...parts) => [base, ...parts.map(encodeURIComponent)].join('/');
