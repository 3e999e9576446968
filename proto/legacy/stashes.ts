import * as v from 'valibot';

// Stashes of the legacy API (docs/compatibility.md#legacy-api): arbitrary JSON objects kept under a
// path, optionally for a number of seconds.

/**
 * The largest `expire` taken (seconds, about 285,000 years): its deadline in epoch milliseconds must
 * stay an exact integer. Redis refused larger ones too.
 */
const MAX_EXPIRE_SECONDS = 9_000_000_000_000;

/** A stash's content: any JSON object (not an array, not null). */
const StashContent = v.custom<Record<string, unknown>>(
  (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
  'content must be a JSON object',
);

/**
 * The body of `POST /stashes`, with the legacy API's rules: `path` a string, `content` an object, both
 * required; `expire` an integer or null (null or absent: no expiry). An empty path is refused: no path
 * route could read or delete it (`/stash/` names no stash).
 */
export const StashPost = v.object({
  path: v.pipe(v.string(), v.minLength(1)),
  content: StashContent,
  expire: v.optional(
    v.nullable(
      v.pipe(v.number(), v.integer(), v.minValue(-MAX_EXPIRE_SECONDS), v.maxValue(MAX_EXPIRE_SECONDS)),
    ),
  ),
});
