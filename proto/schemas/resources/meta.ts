import * as v from 'valibot';
import { Name, StringMap } from '../common.ts';

/** `metadata` of a resource body: name and namespace may be omitted when the URL gives them. */
export const Meta = v.object({
  name: v.optional(Name),
  namespace: v.optional(Name),
  labels: v.optional(v.nullable(StringMap)),
  annotations: v.optional(v.nullable(StringMap)),
  created_by: v.optional(v.string()),
});

export const Strings = v.array(v.string());
export const OptStrings = v.optional(v.nullable(Strings));
export const UInt = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(0, 'must not be negative'),
);
export const OptUInt = v.optional(UInt);
export const EnvVars = v.optional(
  v.nullable(v.array(v.pipe(v.string(), v.regex(/^[^=]+=/, 'environment variables are KEY=value')))),
);
export const Secrets = v.optional(v.nullable(v.array(v.object({ name: v.string(), secret: v.string() }))));

/** A reference to another resource, as pipelines and checks hold them. */
export const ResourceRef = v.object({ name: Name, type: v.string(), api_version: v.string() });
