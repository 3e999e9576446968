import * as v from 'valibot';

/** Names of namespaces, entities, checks, users: letters, digits, '_', '.', '-', ':' (no spaces). */
const NAME_PATTERN = /^[\w.\-:]+$/;

export const Name = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(253, 'is too long'),
  v.regex(NAME_PATTERN, 'may only contain letters, digits, "_", ".", "-" and ":"'),
);

export const StringMap = v.record(v.string(), v.string());

export const ObjectMeta = v.object({
  name: v.optional(v.string()),
  namespace: v.optional(v.string()),
  labels: v.optional(v.nullable(StringMap)),
  annotations: v.optional(v.nullable(StringMap)),
  created_by: v.optional(v.string()),
});
export type ObjectMeta = v.InferOutput<typeof ObjectMeta>;

export const UInt = v.pipe(v.number(), v.integer(), v.minValue(0));
export const Seconds = v.pipe(v.number(), v.minValue(0));

/** A check's exit status: Sensu's uint32, so 0 to 4294967295. */
const STATUS_RULE = 'must be a whole number from 0 to 4294967295';
export const CheckStatus = v.pipe(
  v.number(STATUS_RULE),
  v.integer(STATUS_RULE),
  v.minValue(0, STATUS_RULE),
  v.maxValue(4_294_967_295, STATUS_RULE),
);

// Issues as sentences naming the field and the rule (docs/compatibility.md#rest-edges): the one place
// every edge (REST bodies, agent input, configuration files) turns valibot's issues into words.

/** valibot's own message, `Invalid type: Expected string but received 5`, which we reword. */
const DEFAULT_MESSAGE = /^Invalid [\w ]+: (Expected [\s\S]* but r|R)eceived /;
/** A message that reads after the field's name: `must not be empty`, `is too long`. */
const PREDICATE = /^(must|may|is|are|has|have|needs?|cannot|should)\b/;

/** `check.history[0].status`; empty for the whole input. */
function pathText(issue: v.BaseIssue<unknown>): string {
  let text = '';
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string') text += text ? `.${key}` : key;
  }
  return text;
}

/** `string` → `a string`, `"a" | "b"` → `"a" or "b"`, as valibot names what it expected. */
function expectedText(expected: string): string {
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    boolean: 'true or false',
    Object: 'an object',
    Array: 'an array',
    null: 'null',
    bigint: 'a number',
  };
  const parts = [
    ...new Set(
      expected
        .replace(/^\((.*)\)$/, '$1')
        .split(' | ')
        .map((p) => words[p] ?? p),
    ),
  ];
  if (parts.length > 2 && parts.every((p) => p.startsWith('"'))) return `one of ${parts.join(', ')}`;
  return parts.join(' or ');
}

/** What a value must be, from an issue valibot gave its own message. */
function ruleOf(issue: v.BaseIssue<unknown>): string {
  const got = issue.received === 'undefined' ? '' : ` (got ${issue.received})`;
  const req = issue.requirement as unknown;
  const items = typeof issue.input === 'string' ? 'characters' : 'items';
  if (issue.kind === 'schema') {
    const last = issue.path?.at(-1) as { origin?: string } | undefined;
    if (last?.origin === 'key' && issue.input === undefined && issue.expected !== 'never')
      return 'is required';
    if (issue.expected === 'never') return 'is not a known field';
    return `must be ${expectedText(issue.expected ?? 'something else')}${got}`;
  }
  switch (issue.type) {
    case 'min_value':
      return `must be at least ${String(req)}${got}`;
    case 'max_value':
      return `must be at most ${String(req)}${got}`;
    case 'integer':
      return `must be a whole number${got}`;
    case 'min_length':
      return `must have at least ${String(req)} ${items}`;
    case 'max_length':
      return `must have at most ${String(req)} ${items}`;
    case 'length':
      return `must have exactly ${String(req)} ${items}`;
    case 'non_empty':
      return 'must not be empty';
    case 'regex':
      return `must match ${String(req)}${got}`;
    default:
      return `is not valid (${issue.message})`;
  }
}

/** One issue as a sentence: `command is required`, `interval must be a number (got "60")`. */
function issueSentence(issue: v.BaseIssue<unknown>): string {
  const path = pathText(issue);
  if (DEFAULT_MESSAGE.test(issue.message)) return `${path || 'the value'} ${ruleOf(issue)}`;
  if (!path) return issue.message;
  if (PREDICATE.test(issue.message)) {
    const got =
      issue.received !== 'undefined' && issue.received.length <= 40 ? ` (got ${issue.received})` : '';
    return `${path} ${issue.message}${got}`;
  }
  // A message that names its field already (`port must be at most 65535`) names its whole path.
  const field = path.replace(/^.*[.\]]/, '');
  if (issue.message.startsWith(`${field} `)) return `${path}${issue.message.slice(field.length)}`;
  return `${path}: ${issue.message}`;
}

/** Turns valibot issues into one line of sentences: `command is required; interval must be ...`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return [...new Set(issues.slice(0, 5).map(issueSentence))].join('; ');
}
