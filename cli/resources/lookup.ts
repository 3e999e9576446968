import { API_PREFIXES } from '../../proto/api.ts';
import { usageError } from '../errors.ts';
import { RESOURCE_TYPES } from './table.ts';
import type { ResourceType } from './types.ts';

// Finding a resource type by any of its names, and the API paths of its collections and items.

const byName = new Map<string, ResourceType>();
for (const t of RESOURCE_TYPES)
  for (const n of [t.singular, t.plural, t.segment, ...t.aliases, ...t.shortNames])
    byName.set(n.toLowerCase(), t);

/** The type a word names: its command names, its API segment, or a short name; undefined if none. */
export const findType = (word: string): ResourceType | undefined => byName.get(word.toLowerCase());

/** The type a word names, or a usage error listing the known ones. */
export function requireType(word: string): ResourceType {
  const t = findType(word);
  if (t) return t;
  throw usageError(`unknown resource type "${word}": ${RESOURCE_TYPES.map((r) => r.plural).join(', ')}`);
}

/** The type of a wrapped resource (`{"type": "CheckConfig", "api_version": "core/v2", ...}`). */
export function typeOfWrapped(type: string, apiVersion: string | undefined): ResourceType | undefined {
  return RESOURCE_TYPES.find(
    (t) =>
      (t.type === type || t.otherTypes.includes(type)) &&
      (apiVersion === undefined || apiVersion === t.apiVersion),
  );
}

/** The collection of a type: in namespace `ns`, or across namespaces when `ns` is undefined. */
export function collectionPath(t: ResourceType, ns: string | undefined): string {
  const prefix = API_PREFIXES[t.apiVersion];
  if (!t.namespaced || ns === undefined) return `${prefix}/${t.segment}`;
  return `${prefix}/namespaces/${encodeURIComponent(ns)}/${t.segment}`;
}

/** The path of one item; `key` holds the parts of its identity (`[entity, check]` for events). */
export function itemPath(t: ResourceType, ns: string, key: string[]): string {
  return `${collectionPath(t, ns)}/${key.map(encodeURIComponent).join('/')}`;
}
