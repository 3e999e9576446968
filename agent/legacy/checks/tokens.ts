// Legacy client tokens (docs/compatibility.md#legacy-client): `:::path|default:::` in any string of a check
// definition, filled from the client definition. Unlike the current agent's templates, an unmatched token
// does not throw: it becomes "" and is recorded, and the caller decides (a check is not run, a hook reports it).

const TOKEN = /:::([^:].*?):::/g;

/** The value at a dotted path of the client definition; undefined when missing or an object (not a leaf). */
function findAttribute(data: unknown, path: string[]): unknown {
  let at = data;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  // A hash leaf is no value: the default applies, as in the legacy client.
  if (at !== null && typeof at === 'object' && !Array.isArray(at)) return undefined;
  return at;
}

/** Text of a leaf as Ruby's `to_s` gives it for JSON values (arrays as their inspect form). */
function asText(value: unknown): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return '[' + value.map((x) => (typeof x === 'string' ? JSON.stringify(x) : asText(x))).join(', ') + ']';
  return String(value as number | boolean);
}

/**
 * Removes what is not valid UTF-8. A JS string cannot hold invalid UTF-8; the legacy client's input could,
 * and what reaches here from a byte source was decoded with U+FFFD (and lone surrogates may remain): both
 * are dropped, as the legacy client dropped the bytes.
 */
function scrub(s: string): string {
  return s.replace(/\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');
}

interface Substituted<T> {
  value: T;
  /** Token paths that found no value and had no default, each once, in order of first appearance. */
  unmatched: string[];
}

/** Substitutes the tokens of one string. */
export function substituteLegacyTokens(text: string, data: unknown): Substituted<string> {
  const unmatched: string[] = [];
  const value = scrub(text).replace(TOKEN, (_, token: string) => {
    const bar = token.indexOf('|');
    const path = bar < 0 ? token : token.slice(0, bar);
    const fallback = bar < 0 ? undefined : token.slice(bar + 1);
    const found = findAttribute(data, path.split('.'));
    // `nil` is no value in the legacy client; `false` is one.
    if (found !== undefined && found !== null) return asText(found);
    if (fallback !== undefined) return fallback;
    if (!unmatched.includes(path)) unmatched.push(path);
    return '';
  });
  return { value, unmatched };
}

/** Substitutes the tokens of every string inside objects and arrays; numbers, booleans and null stay. */
export function substituteLegacyTokensDeep<T>(value: T, data: unknown): Substituted<T> {
  const unmatched: string[] = [];
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') {
      const r = substituteLegacyTokens(x, data);
      for (const u of r.unmatched) if (!unmatched.includes(u)) unmatched.push(u);
      return r.value;
    }
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === 'object')
      return Object.fromEntries(Object.entries(x as Record<string, unknown>).map(([k, v]) => [k, walk(v)]));
    return x;
  };
  return { value: walk(value) as T, unmatched };
}

/** The output of a check or hook whose tokens found no value. */
export const unmatchedOutput = (unmatched: string[]): string =>
  'Unmatched client token(s): ' + unmatched.join(', ');
