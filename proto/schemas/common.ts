import * as v from 'valibot';

/** Names of namespaces, entities, checks, users: letters, digits, '_', '.', '-', ':' (no spaces). */
export const NAME_PATTERN = /^[\w.\-:]+$/;

export const Name = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(253, 'is too long'),
  v.regex(NAME_PATTERN, 'may only contain letters, digits, "_", ".", "-" and ":"'));

/** Label keys: letters, digits and underscores, starting with a letter. */
export const LabelKey = v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'label keys start with a letter and hold only letters, digits and "_"'));

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

/** Turns valibot issues into one readable line: `check.interval: Invalid type ...`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues.slice(0, 5).map((i) => {
    const path = v.getDotPath(i);
    return path ? `${path}: ${i.message}` : i.message;
  }).join('; ');
}

export class ValidationError extends Error {
  constructor(message: string) { super(message); this.name = 'ValidationError'; }
}

/** Parses an outside input once, at the edge; throws a ValidationError with a readable message. */
export function parseWith<S extends v.GenericSchema>(schema: S, input: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (!r.success) throw new ValidationError(`invalid ${what}: ${describeIssues(r.issues)}`);
  return r.output;
}
