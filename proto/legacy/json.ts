// What the legacy validators ask of a parsed JSON value (client definitions, check definitions,
// results), and the name patterns the legacy rules share: one copy for every legacy validator.

export const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
export const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);
export const isStrings = (x: unknown): x is string[] =>
  Array.isArray(x) && x.every((s) => typeof s === 'string');
/** Present: the legacy rules skip an attribute that is absent or null. */
export const isSet = (x: unknown): boolean => x !== undefined && x !== null;

/** An aggregate's name (`aggregate`, each of `aggregates`). */
export const AGGREGATE_NAME = /^[\w.:|-]+$/;
/** A result's `source`: a name, or a name with `:::token:::` parts still to substitute. */
export const SOURCE_NAME = /^[\w.-]*(:{3}[\w|.-]+:{3}[\w.-]*|[\w.-]+)$/;
