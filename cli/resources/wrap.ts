import type { ResourceType } from './types.ts';

// The wrapped form `{type, api_version, metadata, spec}` of files and of the wrapped-json and yaml
// formats (docs/compatibility.md: core/v2 bodies are flat, the wrapped form carries the type).

type Item = Record<string, unknown>;

interface Wrapped {
  type: string;
  api_version: string;
  metadata: Item;
  spec: Item;
}

const isObject = (x: unknown): x is Item => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Whether `x` is in the wrapped form: a `type` and an object `spec`. */
export const isWrapped = (x: unknown): x is Wrapped =>
  isObject(x) && typeof x.type === 'string' && isObject(x.spec);

/** An item of the API in the wrapped form; items the API already wraps are left as they are. */
export function wrap(t: ResourceType, item: Item): Item {
  if (t.wrappedInApi) return item;
  const { metadata, ...spec } = item;
  return { type: t.type, api_version: t.apiVersion, metadata: isObject(metadata) ? metadata : {}, spec };
}

/** The body the API takes for `t`: flat for core/v2 (the spec with the metadata), wrapped otherwise. */
export function toApiBody(t: ResourceType, x: Item): Item {
  if (t.wrappedInApi || !isWrapped(x)) return x;
  const metadata = isObject(x.metadata) && Object.keys(x.metadata).length ? x.metadata : x.spec.metadata;
  const { metadata: _inner, ...spec } = x.spec;
  return metadata === undefined ? spec : { ...spec, metadata };
}
