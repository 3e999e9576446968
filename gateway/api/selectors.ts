import type { Context } from 'hono';
import { ApiError } from './errors.ts';
import { fieldKind, pathOf, type FieldKind, type FieldSet } from './selector-fields.ts';

// Label and field selectors: `key == value`, `!=`, `in (a, b)`, `notin (a, b)`, `matches text`,
// joined by `&&`; several `labelSelector`/`fieldSelector` parameters are ANDed. For `in`/`notin` the
// list may also be a field holding an array: `linux in entity.subscriptions`.

type Op = '==' | '!=' | 'in' | 'notin' | 'matches';
interface Clause {
  left: string;
  op: Op;
  values: string[];
  rightIsField: boolean;
}

type Predicate = (obj: unknown) => boolean;

const unquote = (s: string) => s.trim().replace(/^(['"])(.*)\1$/, '$2');

function parseClause(text: string, kind: string): Clause {
  const m = /^\s*(.+?)\s*(==|!=|\bnotin\b|\bin\b|\bmatches\b)\s*(.*?)\s*$/.exec(text);
  if (!m || !m[1] || m[3] === undefined || m[3] === '')
    throw new ApiError(
      'invalid_argument',
      `invalid ${kind} "${text.trim()}": expected <key> <op> <value> with op ==, !=, in, notin or matches`,
    );
  const op = m[2] as Op;
  const right = m[3];
  if (op === 'in' || op === 'notin') {
    const list = /^[([](.*)[)\]]$/.exec(right);
    if (list)
      return {
        left: unquote(m[1]),
        op,
        values: list[1]!
          .split(',')
          .map(unquote)
          .filter((s) => s !== ''),
        rightIsField: false,
      };
    return { left: unquote(m[1]), op, values: [right.trim()], rightIsField: true };
  }
  return { left: unquote(m[1]), op, values: [unquote(right)], rightIsField: false };
}

function parse(expr: string, kind: string): Clause[] {
  return expr.split('&&').map((part) => parseClause(part, kind));
}

/**
 * Reads a dotted path (the leading resource word removed); metadata fields may be named directly
 * (`check.name` = `check.metadata.name`), as in the reference, and a path through an array reads
 * that field of every item.
 */
function fieldValue(obj: unknown, parts: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const p of parts) {
    if (Array.isArray(cur)) {
      cur = cur.flatMap((item) => {
        const x = fieldValue(item, [p]);
        return x === undefined ? [] : x;
      });
      continue;
    }
    if (cur === null || typeof cur !== 'object') return undefined;
    const o = cur as Record<string, unknown> & { metadata?: Record<string, unknown> };
    cur = o[p] !== undefined ? o[p] : o.metadata?.[p];
  }
  return cur;
}

/** An absent field reads as the zero value of its kind, as Sensu's Go fields do (`publish == false`). */
const ZERO: Record<FieldKind, unknown> = { boolean: false, number: 0, string: '', array: [], any: undefined };

/** The reader of one field of a set: 400 naming it when the resource has no such field. */
function reader(set: FieldSet, field: string): (obj: unknown) => unknown {
  const kind = fieldKind(set, field);
  if (kind === undefined)
    throw new ApiError(
      'invalid_argument',
      `invalid fieldSelector: "${field}" is not a field of ${set.word} (fields include ${set.documented.join(', ')})`,
    );
  const parts = pathOf(field, set.word);
  const computed = set.computed?.[parts.join('.')];
  if (computed) return computed.read;
  return (obj) => {
    const x = fieldValue(obj, parts);
    return x === undefined || x === null ? ZERO[kind] : x;
  };
}

const str = (x: unknown) =>
  x === undefined || x === null ? '' : typeof x === 'object' ? JSON.stringify(x) : String(x);

function test(clause: Clause, read: (key: string) => unknown): boolean {
  if (clause.rightIsField) {
    const arr = read(clause.values[0]!);
    const has = Array.isArray(arr) && arr.map(str).includes(clause.left);
    return clause.op === 'in' ? has : !has;
  }
  const actual = read(clause.left);
  const values = Array.isArray(actual) ? actual.map(str) : [str(actual)];
  switch (clause.op) {
    case '==':
      return values.includes(clause.values[0]!);
    case '!=':
      return !values.includes(clause.values[0]!);
    case 'in':
      return values.some((x) => clause.values.includes(x));
    case 'notin':
      return !values.some((x) => clause.values.includes(x));
    case 'matches':
      return values.some((x) => x.includes(clause.values[0]!));
  }
}

/**
 * The filter the request's selectors ask for, or undefined when there are none. `labelsOf` gives the
 * labels a label selector sees; `fields` the fields a field selector may name (a 400 for others).
 */
export function selectorOf(
  c: Context,
  fields: FieldSet,
  labelsOf: (obj: unknown) => Record<string, string> | undefined,
): Predicate | undefined {
  const label = c.req.queries('labelSelector') ?? [];
  const field = c.req.queries('fieldSelector') ?? [];
  if (label.length === 0 && field.length === 0) return undefined;
  const labelClauses = label.flatMap((e) => parse(e, 'labelSelector'));
  // Every field is resolved before any item is read: an unknown one is a 400, never an empty list.
  const fieldClauses = field
    .flatMap((e) => parse(e, 'fieldSelector'))
    .map((cl) => {
      const name = cl.rightIsField ? cl.values[0]! : cl.left;
      return { cl, name, read: reader(fields, name) };
    });
  return (obj) => {
    const labels = labelsOf(obj) ?? {};
    return (
      labelClauses.every((cl) => test(cl, (k) => labels[k])) &&
      fieldClauses.every(({ cl, name, read }) => test(cl, (k) => (k === name ? read(obj) : undefined)))
    );
  };
}

/** The items a request's selectors keep (all of them without selectors), for lists not paged by listIn. */
export function selectItems<T>(
  c: Context,
  fields: FieldSet,
  items: T[],
  valueOf: (item: T) => unknown,
  labelsOf: (obj: unknown) => Record<string, string> | undefined = metadataLabels,
): T[] {
  const match = selectorOf(c, fields, labelsOf);
  return match ? items.filter((i) => match(valueOf(i))) : items;
}

/** The labels a resource is selected by: its own metadata labels. */
export const metadataLabels = (obj: unknown): Record<string, string> | undefined =>
  (obj as { metadata?: { labels?: Record<string, string> } })?.metadata?.labels ?? undefined;

/** Events are selected by the labels of their entity, check and event together. */
export const eventLabels = (obj: unknown): Record<string, string> => {
  const e = obj as {
    metadata?: { labels?: Record<string, string> };
    entity?: { metadata?: { labels?: Record<string, string> } };
    check?: { metadata?: { labels?: Record<string, string> } };
  };
  return { ...e.entity?.metadata?.labels, ...e.check?.metadata?.labels, ...e.metadata?.labels };
};
