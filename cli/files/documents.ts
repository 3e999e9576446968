import * as v from 'valibot';
import { parseAllDocuments } from 'yaml';
import { WrappedResource } from '../../proto/schemas/wrapped-resource.ts';
import { itemPath, typeOfWrapped } from '../resources/lookup.ts';
import type { ResourceType } from '../resources/types.ts';
import { toApiBody } from '../resources/wrap.ts';

// The resources of files for `create -f`, `delete -f` and `prune` (docs/cli.md#files): a text is a
// stream of YAML documents (`---` between them) or of JSON objects one after another (Sensu's
// wrapped-json dumps), or a JSON array of them; each document is one wrapped resource, validated at
// the edge (proto/schemas/wrapped-resource.ts) and turned into the API's body and path.

type Item = Record<string, unknown>;

/** The mark of what `create -f` writes; `prune` deletes only resources that carry it. */
export const MANAGED_LABEL = 'monitorctl/managed-by';
export const MANAGED_VALUE = 'monitorctl';

/** One document of a source: its value, or why it could not be read. */
type Document = { source: string; index: number } & ({ value: unknown } | { error: string });

/** A document that is a resource the API can take. */
export interface FileResource {
  source: string;
  /** 1-based position of the document in its source. */
  index: number;
  type: ResourceType;
  /** Its identity: `[name]`, `[entity, check]` for events. */
  key: string[];
  /** For namespaced kinds. */
  namespace: string | undefined;
  path: string;
  /** The body the API takes (flat for core/v2). */
  body: Item;
}

/** A document that is not one: the source, its position, what it looked like, and why. */
export interface FileProblem {
  source: string;
  index: number;
  /** `CheckConfig "web"`, as far as the document says. */
  what: string;
  message: string;
}

const isObject = (x: unknown): x is Item => x !== null && typeof x === 'object' && !Array.isArray(x);

/**
 * The JSON values of a text that holds several one after another (`{...}{...}`, or on lines of
 * their own). Strings are skipped over so that braces inside them do not count.
 */
export function splitJsonStream(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) parts.push(text.slice(start, i + 1));
      if (depth < 0) throw new Error(`unexpected "${ch}" at offset ${i}`);
    } else if (depth === 0 && !/\s/.test(ch)) throw new Error(`unexpected "${ch}" at offset ${i}`);
  }
  if (depth !== 0 || inString) throw new Error('the JSON ends in the middle of a value');
  return parts;
}

type Parsed = { value: unknown } | { error: string };

/** The values of a text of JSON objects (or arrays) one after another; undefined when it is not one. */
function jsonStream(text: string): Parsed[] | undefined {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return splitJsonStream(text).map((p) => ({ value: JSON.parse(p) as unknown }));
  } catch {
    return undefined; // YAML's flow style starts with a brace too: let the YAML parser say what is wrong
  }
}

function yamlDocuments(text: string): Parsed[] {
  const out: Parsed[] = [];
  for (const doc of parseAllDocuments(text, { schema: 'core', resolveKnownTags: false, logLevel: 'error' })) {
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) out.push({ error: `not YAML: ${problem.message.split('\n')[0]!.replace(/:$/, '')}` });
    else {
      const value: unknown = doc.toJS({ maxAliasCount: 100 });
      if (value !== null && value !== undefined) out.push({ value });
    }
  }
  return out;
}

/** The documents of one source's text; an array (of JSON or YAML) counts as one document per item. */
export function documentsOf(source: string, text: string): Document[] {
  const values = jsonStream(text) ?? yamlDocuments(text);
  const flat = values.flatMap((x) =>
    'value' in x && Array.isArray(x.value) ? x.value.map((value) => ({ value })) : [x],
  );
  return flat.map((x, i) => ({ source, index: i + 1, ...x }));
}

/** `CheckConfig "web"` (or what there is of it) for messages. */
function describe(doc: unknown): string {
  if (!isObject(doc)) return 'document';
  const type = typeof doc.type === 'string' ? doc.type : 'resource';
  const meta = isObject(doc.metadata) ? doc.metadata : {};
  const spec = isObject(doc.spec) ? doc.spec : {};
  const name = meta.name ?? spec.name ?? spec.username;
  return typeof name === 'string' ? `${type} "${name}"` : type;
}

/**
 * The resource of a document, with `namespace` for namespaced kinds that name none, and the
 * managed-by label when `mark` (kinds that have metadata); or the problem with it.
 */
export function resourceOf(
  doc: Document,
  o: { namespace: string; mark: boolean },
): FileResource | FileProblem {
  const at = { source: doc.source, index: doc.index };
  if ('error' in doc) return { ...at, what: 'document', message: doc.error };
  const what = describe(doc.value);
  const parsed = v.safeParse(WrappedResource, doc.value);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue.path?.map((p) => String(p.key)).join('.');
    return { ...at, what, message: `not a wrapped resource: ${where ? `${where}: ` : ''}${issue.message}` };
  }
  const w = parsed.output;
  const t = typeOfWrapped(w.type, w.api_version);
  if (!t)
    return {
      ...at,
      what,
      message: `unknown type ${w.type}${w.api_version ? ` (api_version ${w.api_version})` : ''}`,
    };
  const metadata: Item = { ...(w.metadata ?? {}) };
  let namespace: string | undefined;
  if (t.namespaced) {
    namespace =
      typeof metadata.namespace === 'string' && metadata.namespace ? metadata.namespace : o.namespace;
    metadata.namespace = namespace;
  }
  const hasMetadata = t.nameField?.startsWith('metadata.') === true;
  if (o.mark && hasMetadata)
    metadata.labels = {
      ...(isObject(metadata.labels) ? metadata.labels : {}),
      [MANAGED_LABEL]: MANAGED_VALUE,
    };
  const wrapped = { ...w, api_version: w.api_version ?? t.apiVersion, metadata };
  const body = t.wrappedInApi
    ? wrapped
    : toApiBody(t, hasMetadata || Object.keys(metadata).length ? wrapped : { ...wrapped, metadata: {} });
  const key = keyOf(t, body);
  if (!key) return { ...at, what, message: `${w.type} without a name` };
  return { ...at, type: t, key, namespace, path: itemPath(t, namespace ?? '', key), body };
}

function keyOf(t: ResourceType, body: Item): string[] | undefined {
  if (t.keyArgs.length > 1) {
    const parts = t.nameOf(body).split('/');
    return parts.every(Boolean) ? parts : undefined;
  }
  const name = t.nameOf(body);
  return name ? [name] : undefined;
}

export const isProblem = (x: FileResource | FileProblem): x is FileProblem => !('path' in x);

/** `check "web" in namespace "default"`, for messages. */
export function subjectOf(r: Pick<FileResource, 'type' | 'key' | 'namespace'>): string {
  return `${r.type.singular} "${r.key.join('/')}"${r.namespace !== undefined ? ` in namespace "${r.namespace}"` : ''}`;
}
