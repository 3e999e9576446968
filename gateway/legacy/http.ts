import type { Context } from 'hono';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import * as v from 'valibot';
import type { LegacyEnv } from './env.ts';

// What every legacy route answers with (docs/compatibility.md#legacy-api): JSON when there is content,
// no body at all for the errors the legacy API sent bare (400, 401, 404, 405) and for 204.

/** A failure answered with its status and no body (or `{"error"}` for our own additions, see `body`). */
export class LegacyError extends Error {
  constructor(
    readonly status: StatusCode,
    /** Only for failures the legacy API never had (our stores unreachable): `{"error": message}`. */
    readonly body?: { error: string },
  ) {
    super(body?.error ?? `legacy API ${status}`);
    this.name = 'LegacyError';
  }
}

export const empty = (c: Context, status: StatusCode) => c.body(null, status);

export const json = (c: Context, status: ContentfulStatusCode, value: unknown) => c.json(value, status);

/** The `issued` of every 202: the epoch second the request was accepted. */
export const issued = () => ({ issued: Math.floor(Date.now() / 1000) });

/** The request's JSON body, which must be an object; anything else is a 400 with no body. */
export async function readObject(c: Context<LegacyEnv>): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    throw new LegacyError(400);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new LegacyError(400);
  return body as Record<string, unknown>;
}

/** The body checked by one of proto/legacy's rule schemas; a violation is a 400 with no body. */
export async function readValid<S extends v.GenericSchema>(
  c: Context<LegacyEnv>,
  schema: S,
): Promise<v.InferOutput<S>> {
  const r = v.safeParse(schema, await readObject(c));
  if (!r.success) throw new LegacyError(400);
  return r.output;
}

const DIGITS = /^[0-9]+$/;

/**
 * `limit` and `offset` (digits only, others ignored): with a `limit`, the page and an `X-Pagination`
 * header with the total; an offset past the end is an empty page.
 */
function paginate<T>(c: Context, items: readonly T[]): T[] {
  const limitRaw = c.req.query('limit');
  if (limitRaw === undefined || !DIGITS.test(limitRaw)) return [...items];
  const offsetRaw = c.req.query('offset');
  const limit = Number(limitRaw);
  const offset = offsetRaw !== undefined && DIGITS.test(offsetRaw) ? Number(offsetRaw) : 0;
  c.header('X-Pagination', JSON.stringify({ limit, offset, total: items.length }));
  return items.slice(offset, offset + limit);
}

type Attrs = { [k: string]: string | Attrs };

/** `filter.<dot.path>=value` query parameters as nested attributes. */
function filterAttrs(c: Context): Attrs | undefined {
  let attrs: Attrs | undefined;
  for (const [key, value] of Object.entries(c.req.query())) {
    if (!key.startsWith('filter.')) continue;
    const path = key.slice('filter.'.length).split('.');
    if (path.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) continue;
    attrs ??= {};
    let node: Attrs = attrs;
    for (const p of path.slice(0, -1)) {
      const next = node[p];
      node = typeof next === 'object' ? next : (node[p] = {});
    }
    node[path[path.length - 1]!] = value;
  }
  return attrs;
}

/** Whether `obj` has every attribute: nested objects recursively, scalars by their text. */
function matches(obj: unknown, attrs: Attrs): boolean {
  if (!obj || typeof obj !== 'object') return false;
  const o = obj as Record<string, unknown>;
  return Object.entries(attrs).every(([k, want]) => {
    if (!Object.hasOwn(o, k)) return false;
    const have = o[k];
    if (typeof want === 'object') return matches(have, want);
    return typeof have === 'object' && have !== null ? JSON.stringify(have) === want : String(have) === want;
  });
}

/** A GET list narrowed by its `filter.*` parameters, then paginated. */
export function listed<T>(c: Context, items: readonly T[]): T[] {
  const attrs = c.req.method === 'GET' || c.req.method === 'HEAD' ? filterAttrs(c) : undefined;
  return paginate(c, attrs ? items.filter((i) => matches(i, attrs)) : items);
}
