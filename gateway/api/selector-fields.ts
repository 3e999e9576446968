import * as v from 'valibot';
import { Entity } from '../../proto/schemas/entity.ts';
import { Check, Event } from '../../proto/schemas/event.ts';
import { CheckConfig } from '../../proto/schemas/resources/checks.ts';
import { ApiKey, Namespace } from '../../proto/schemas/resources/users.ts';

// The fields a field selector may name on each resource (docs/compatibility.md#rest-edges): every
// field of the resource's schema (nested with dots, metadata fields by their short name, as in
// `check.name`), and the fields Sensu computes (`event.is_silenced`). Anything else is a 400 naming
// it: a misspelled field matched nothing, silently, before.

/** What kind of value a field holds; an absent one reads as Go's zero value of it, as in Sensu. */
export type FieldKind = 'boolean' | 'number' | 'string' | 'array' | 'any';

/** The fields of one resource for field selectors. */
export interface FieldSet {
  /** The resource's word, with which field paths may begin: `check` in `check.name`. */
  word: string;
  /** What a stored or listed item of the resource is. */
  schema: v.GenericSchema;
  /** Fields computed from the item rather than read, by path without the word. */
  computed?: Record<string, { kind: FieldKind; read: (obj: unknown) => unknown }>;
  /** The fields Sensu documents for this resource, named in the answer to an unknown one. */
  documented: readonly string[];
}

// Valibot keeps a schema's parts on its object (`entries`, `wrapped`, `item`, ...): read them to
// find where a path leads. Only the shapes our schemas use are known.
interface SchemaParts {
  type: string;
  entries?: Record<string, SchemaParts>;
  wrapped?: SchemaParts;
  item?: SchemaParts;
  value?: SchemaParts;
  rest?: SchemaParts;
  options?: SchemaParts[];
}

const WRAPPERS = new Set([
  'optional',
  'nullable',
  'nullish',
  'exact_optional',
  'undefinedable',
  'non_optional',
]);
const OBJECTS = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest']);

function leafKind(s: SchemaParts): FieldKind {
  switch (s.type) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return 'number';
    case 'string':
    case 'picklist':
    case 'literal':
    case 'enum':
      return 'string';
    case 'array':
      return 'array';
    default:
      return 'any';
  }
}

/** The kind of the field a path names in a schema, or undefined when the schema has no such field. */
function kindAt(schema: SchemaParts | undefined, parts: readonly string[]): FieldKind | undefined {
  let s = schema;
  while (s && WRAPPERS.has(s.type)) s = s.wrapped;
  if (!s) return undefined;
  if (parts.length === 0) return leafKind(s);
  const [head, ...rest] = parts as [string, ...string[]];
  if (OBJECTS.has(s.type) && s.entries) {
    if (Object.hasOwn(s.entries, head)) return kindAt(s.entries[head], rest);
    // `check.name` is `check.metadata.name`, as the reference's selectors read it.
    const meta = kindAt(s.entries.metadata, parts);
    if (meta) return meta;
    if (s.type === 'object_with_rest') return kindAt(s.rest, rest);
    // Open objects (host facts, a legacy definition) may hold any key.
    return s.type === 'loose_object' ? 'any' : undefined;
  }
  switch (s.type) {
    case 'record':
      return kindAt(s.value, rest);
    case 'array':
      // A field of the items: `check.history.status` is every status of the history.
      return kindAt(s.item, parts);
    case 'union':
    case 'variant':
    case 'intersect':
      for (const o of s.options ?? []) {
        const k = kindAt(o, parts);
        if (k) return k;
      }
      return undefined;
    case 'unknown':
    case 'any':
      return 'any';
    default:
      return undefined;
  }
}

/** The path of a field without its optional leading resource word. */
export const pathOf = (field: string, word: string): string[] => {
  const parts = field.split('.');
  if (parts[0] === word && parts.length > 1) parts.shift();
  return parts;
};

/** The kind of a field of the set, or undefined when the resource has no such field. */
export function fieldKind(set: FieldSet, field: string): FieldKind | undefined {
  const parts = pathOf(field, set.word);
  if (parts.some((p) => p === '')) return undefined;
  return set.computed?.[parts.join('.')]?.kind ?? kindAt(set.schema as unknown as SchemaParts, parts);
}

const META_FIELDS = (word: string) => [`${word}.name`, `${word}.namespace`, `${word}.labels.<key>`];

/** The fields Sensu documents for selectors on the configuration resources, by word. */
const DOCUMENTED: Record<string, readonly string[]> = {
  asset: [...META_FIELDS('asset'), 'asset.filters'],
  check: [
    ...META_FIELDS('check'),
    'check.handlers',
    'check.publish',
    'check.round_robin',
    'check.runtime_assets',
    'check.subscriptions',
  ],
  filter: [...META_FIELDS('filter'), 'filter.action', 'filter.runtime_assets'],
  handler: [
    ...META_FIELDS('handler'),
    'handler.filters',
    'handler.handlers',
    'handler.mutator',
    'handler.type',
  ],
  hook: META_FIELDS('hook'),
  mutator: [...META_FIELDS('mutator'), 'mutator.runtime_assets'],
  pipeline: META_FIELDS('pipeline'),
  role: META_FIELDS('role'),
  rolebinding: [...META_FIELDS('rolebinding'), 'rolebinding.role_ref.name', 'rolebinding.role_ref.type'],
  silenced: [
    ...META_FIELDS('silenced'),
    'silenced.check',
    'silenced.creator',
    'silenced.expire_on_resolve',
    'silenced.subscription',
  ],
  clusterrole: ['clusterrole.name', 'clusterrole.labels.<key>'],
  clusterrolebinding: [
    'clusterrolebinding.name',
    'clusterrolebinding.labels.<key>',
    'clusterrolebinding.role_ref.name',
    'clusterrolebinding.role_ref.type',
  ],
};

/**
 * An event's check as selectors see it: the check configuration's fields (`publish`, `round_robin`,
 * `runtime_assets` travel with the event) and the result's.
 */
const EventCheck = v.object({ ...CheckConfig.entries, ...Check.entries });

/** Whether an event is silenced, as Sensu's `event.is_silenced`: its check names silences. */
const eventSilenced = (obj: unknown): boolean => {
  const check = (obj as { check?: { is_silenced?: unknown; silenced?: unknown } } | null)?.check;
  return check?.is_silenced === true || (Array.isArray(check?.silenced) && check.silenced.length > 0);
};

export const EVENT_FIELDS: FieldSet = {
  word: 'event',
  schema: v.object({ ...Event.entries, check: v.optional(EventCheck) }),
  computed: { is_silenced: { kind: 'boolean', read: eventSilenced } },
  documented: [
    'event.name',
    'event.namespace',
    'event.is_silenced',
    'event.labels.<key>',
    'event.check.name',
    'event.check.handlers',
    'event.check.is_silenced',
    'event.check.publish',
    'event.check.round_robin',
    'event.check.runtime_assets',
    'event.check.state',
    'event.check.status',
    'event.check.subscriptions',
    'event.entity.name',
    'event.entity.deregister',
    'event.entity.entity_class',
    'event.entity.subscriptions',
  ],
};

export const ENTITY_FIELDS: FieldSet = {
  word: 'entity',
  schema: Entity,
  documented: [...META_FIELDS('entity'), 'entity.deregister', 'entity.entity_class', 'entity.subscriptions'],
};

/** A user as the API lists it (gateway/api/routes/users.ts). */
export const USER_FIELDS: FieldSet = {
  word: 'user',
  schema: v.object({ username: v.string(), groups: v.array(v.string()), disabled: v.boolean() }),
  documented: ['user.username', 'user.disabled', 'user.groups'],
};

export const NAMESPACE_FIELDS: FieldSet = {
  word: 'namespace',
  schema: Namespace,
  documented: ['namespace.name'],
};

export const APIKEY_FIELDS: FieldSet = {
  word: 'apikey',
  schema: ApiKey,
  documented: ['apikey.name', 'apikey.username'],
};

/** The field set of a configuration resource, by its word and schema. */
export const configFields = (word: string, schema: v.GenericSchema): FieldSet => ({
  word,
  schema,
  documented: DOCUMENTED[word] ?? META_FIELDS(word),
});
