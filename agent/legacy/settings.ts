import { readdirSync, readFileSync, statSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../proto/flags.ts';
import { legacySettings, type LegacySettings } from '../../proto/legacy/client-definition.ts';
import { isObject } from '../../proto/legacy/json.ts';

// Reads a legacy client's configuration as the legacy client's settings loader did
// (docs/compatibility.md#legacy-client): a directory's `*.json` files deep-merged in name order, or
// one file; then the MONITOR_CLIENT_* overrides and the defaults of name and address.

type Obj = Record<string, unknown>;

/** Hashes merge key by key, arrays join without repeats, anything else: the later file wins. */
export function deepMerge(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, value] of Object.entries(b)) {
    const prev = out[k];
    if (isObject(prev) && isObject(value)) out[k] = deepMerge(prev, value);
    else if (Array.isArray(prev) && Array.isArray(value)) out[k] = [...new Set([...prev, ...value])];
    else out[k] = value;
  }
  return out;
}

function readJson(file: string): Obj {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`--legacy-config: cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`--legacy-config: ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new ConfigError(`--legacy-config: ${file} must hold a JSON object`);
  return doc;
}

/** The merged document of a file or of a directory's `*.json` files (name order). */
function readDocument(path: string): Obj {
  let dir: boolean;
  try {
    dir = statSync(path).isDirectory();
  } catch (err) {
    throw new ConfigError(`--legacy-config: cannot read ${path}: ${(err as Error).message}`);
  }
  if (!dir) return readJson(path);
  const files = readdirSync(path)
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new ConfigError(`--legacy-config: ${path} holds no *.json file`);
  return files.reduce<Obj>((doc, f) => deepMerge(doc, readJson(join(path, f))), {});
}

/** The first non-loopback IPv4 address of the host, else `unknown` (the legacy default). */
function firstIpv4(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return 'unknown';
}

/**
 * The validated settings of PATH. MONITOR_CLIENT_NAME, _ADDRESS and _SUBSCRIPTIONS (comma-separated)
 * replace the file's values, as SENSU_CLIENT_* did. Throws ConfigError (one line) when it is bad.
 */
export function loadLegacySettings(path: string, env: NodeJS.ProcessEnv): LegacySettings {
  const doc = readDocument(path);
  const client: Obj = isObject(doc.client)
    ? { ...doc.client }
    : doc.client === undefined
      ? {}
      : (doc.client as Obj);
  if (isObject(client)) {
    if (env.MONITOR_CLIENT_NAME) client.name = env.MONITOR_CLIENT_NAME;
    if (env.MONITOR_CLIENT_ADDRESS) client.address = env.MONITOR_CLIENT_ADDRESS;
    if (env.MONITOR_CLIENT_SUBSCRIPTIONS !== undefined)
      client.subscriptions = env.MONITOR_CLIENT_SUBSCRIPTIONS.split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    client.name ??= hostname();
    client.address ??= firstIpv4();
  }
  const r = legacySettings({ ...doc, client });
  if (!r.ok) throw new ConfigError(`--legacy-config: ${r.message}`);
  return r.settings;
}
