import { readFileSync } from 'node:fs';
import { parseYamlFile } from '../../lib/yaml-file.ts';
import { usageError } from '../errors.ts';
import { typeOfWrapped } from './lookup.ts';
import type { FieldFlag, ResourceType } from './types.ts';
import { isWrapped, toApiBody } from './wrap.ts';

// Bodies of `create` and `update`: one resource read from a file (JSON or YAML, flat or wrapped),
// fields set by flags, and the name from the command line.

type Item = Record<string, unknown>;

const isObject = (x: unknown): x is Item => x !== null && typeof x === 'object' && !Array.isArray(x);

/** The text of a file, or of stdin for `-`. */
export function readInput(path: string, stdin: () => string): string {
  if (path === '-') return stdin();
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw usageError(`--file: cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
}

/** The one resource of `text` (JSON is YAML too) as the API's body for `t`. */
export function resourceFromText(t: ResourceType, text: string, where: string): Item {
  let doc: unknown;
  try {
    doc = parseYamlFile(text);
  } catch (err) {
    throw usageError(`${where}: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw usageError(`${where}: expected one resource (an object)`);
  if (isWrapped(doc)) {
    const found = typeOfWrapped(doc.type, typeof doc.api_version === 'string' ? doc.api_version : undefined);
    if (found !== t)
      throw usageError(`${where}: holds a ${doc.type}${found ? ` (${found.plural})` : ''}, not a ${t.type}`);
  }
  return toApiBody(t, doc);
}

/** Sets `value` at a dotted path of `body`, making the objects on the way. */
export function setPath(body: Item, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = body;
  for (const k of keys.slice(0, -1)) {
    if (!isObject(cur[k])) cur[k] = {};
    cur = cur[k] as Item;
  }
  const last = keys[keys.length - 1]!;
  cur[last] = isObject(value) && isObject(cur[last]) ? { ...cur[last], ...value } : value;
}

/** The value of a field flag's text. */
export function parseFieldValue(f: FieldFlag, raw: string | string[]): unknown {
  const name = f.flags.split(' ')[0]!;
  switch (f.parse) {
    case 'string':
      return raw;
    case 'int': {
      if (!/^\d+$/.test(String(raw))) throw usageError(`${name}: "${String(raw)}" is not a whole number`);
      return Number(raw);
    }
    case 'bool':
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw usageError(`${name}: "${String(raw)}" is not true or false`);
    case 'list':
      return String(raw)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'labels': {
      const out: Record<string, string> = {};
      for (const pair of Array.isArray(raw) ? raw : [raw]) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw usageError(`${name}: "${pair}" is not key=value`);
        out[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return out;
    }
  }
}

/**
 * Puts the command line's name into the body where `t` keeps it; a body that names another one is
 * a usage error (never silently renamed).
 */
export function placeName(t: ResourceType, body: Item, key: string[]): Item {
  if (!t.nameField) return body;
  const name = key.join('/');
  const current = t.nameField.split('.').reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), body);
  if (current !== undefined && current !== name)
    throw usageError(`the resource is named "${String(current)}" in the file, not "${name}"`);
  const out = { ...body };
  setPath(out, t.nameField, name);
  return out;
}
