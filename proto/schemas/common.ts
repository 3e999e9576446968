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

/** Turns valibot issues into one readable line: `check.interval: Invalid type ...`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .slice(0, 5)
    .map((i) => {
      const path = v.getDotPath(i);
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}
