import type { Context } from 'hono';
import { CONTINUE_HEADER } from '../../proto/api.ts';
import { ApiError } from './errors.ts';

interface Paging {
  limit: number;
  after?: string;
}

/** Reads `limit` and `continue`: 400 for a bad limit or a token that is not ours. */
export function pagingOf(c: Context): Paging {
  const rawLimit = c.req.query('limit');
  let limit = 0;
  if (rawLimit !== undefined && rawLimit !== '') {
    if (!/^\d+$/.test(rawLimit))
      throw new ApiError('invalid_argument', `limit must be a whole number, not "${rawLimit}"`);
    limit = Number(rawLimit);
  }
  const token = c.req.query('continue');
  if (!token) return { limit };
  const after = Buffer.from(token, 'base64url').toString('utf8');
  if (!after || Buffer.from(after, 'utf8').toString('base64url') !== token)
    throw new ApiError('invalid_argument', 'invalid continue token');
  return { limit, after };
}

/**
 * One page of `items` (ordered by key) after the continue position; sets the header for the next.
 * `items` may be lazy: only what the page needs is read.
 */
export function page<T>(c: Context, items: Iterable<T>, keyOf: (t: T) => string, p: Paging): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (p.after !== undefined && keyOf(item) <= p.after) continue;
    if (p.limit > 0 && out.length === p.limit) {
      c.header(CONTINUE_HEADER, Buffer.from(keyOf(out[out.length - 1]!), 'utf8').toString('base64url'));
      return out;
    }
    out.push(item);
  }
  return out;
}
