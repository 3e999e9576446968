// @ts-check
import { ApiError, errorOf } from './errors.js';
import { accessToken, dropSession } from './session.js';

export const CORE = '/api/core/v2';

/**
 * @typedef {{
 *   method?: string,
 *   body?: unknown,
 *   query?: Record<string, string | number | undefined>,
 *   signal?: AbortSignal,
 * }} RequestOptions
 */

/**
 * @param {string} path
 * @param {RequestOptions['query']} [query]
 */
export function urlOf(path, query) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/**
 * One API call with the session's token. A 401 ends the session (the page goes back to sign-in);
 * any other failure is an ApiError with the API's message.
 * @param {string} path absolute, e.g. `${CORE}/namespaces`
 * @param {RequestOptions} [o]
 * @returns {Promise<Response>}
 */
export async function call(path, o = {}) {
  const token = await accessToken();
  /** @type {Record<string, string>} */
  const headers = { Authorization: `Bearer ${token}` };
  if (o.body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(urlOf(path, o.query), {
      method: o.method ?? 'GET',
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      signal: o.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'the backend cannot be reached');
  }
  if (res.status === 401) {
    const err = await errorOf(res);
    dropSession();
    throw err;
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

/**
 * A JSON answer (null for an empty body).
 * @template T
 * @param {string} path
 * @param {RequestOptions} [o]
 * @returns {Promise<T>}
 */
export async function json(path, o) {
  const res = await call(path, o);
  const text = await res.text();
  return text ? JSON.parse(text) : /** @type {T} */ (/** @type {unknown} */ (null));
}

/**
 * One page of a list: `limit` and `continue` are the API's paging (the next token comes in
 * `Monitor-Continue`), `labelSelector`/`fieldSelector` its selectors.
 * @template T
 * @param {string} path
 * @param {{ limit?: number, continue?: string, labelSelector?: string, fieldSelector?: string, signal?: AbortSignal }} [o]
 * @returns {Promise<{ items: T[], continue: string | undefined }>}
 */
export async function page(path, o = {}) {
  const res = await call(path, {
    query: {
      limit: o.limit,
      continue: o.continue,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
    },
    signal: o.signal,
  });
  const items = await res.json();
  return {
    items: Array.isArray(items) ? items : [],
    continue: res.headers.get('Monitor-Continue') || undefined,
  };
}

/**
 * Every item of a list, a page at a time.
 * @template T
 * @param {string} path
 * @param {{ labelSelector?: string, fieldSelector?: string, signal?: AbortSignal, pageSize?: number }} [o]
 * @returns {Promise<T[]>}
 */
export async function all(path, o = {}) {
  /** @type {T[]} */
  const out = [];
  let token;
  do {
    /** @type {{ items: T[], continue: string | undefined }} */
    const p = await page(path, { ...o, limit: o.pageSize ?? 500, continue: token });
    out.push(...p.items);
    token = p.continue;
  } while (token);
  return out;
}

/**
 * The core/v2 path of a namespaced collection, or of every namespace when `ns` is `*`.
 * @param {string} ns
 * @param {string} kind e.g. `events`
 */
export function nsPath(ns, kind) {
  return ns === '*' ? `${CORE}/${kind}` : `${CORE}/namespaces/${encodeURIComponent(ns)}/${kind}`;
}
