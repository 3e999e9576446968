import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { describeIssues } from '../proto/schemas/common.ts';
import { ConfigError, type FlagSpec } from '../proto/flags.ts';
import { parseYamlFile } from './yaml-file.ts';

// Program configuration from four sources, in order of precedence: command-line flag > environment
// variable > YAML config file > default. Flags are declared once; the merged raw values are then
// validated by the program's valibot schema, so every value is checked the same way whatever its
// source.

export const envName = (prefix: string, flag: string) => prefix + flag.replace(/-/g, '_').toUpperCase();

function coerce(spec: FlagSpec, raw: unknown, source: string): unknown {
  const where = `--${spec.name} (from ${source})`;
  switch (spec.type) {
    case 'string':
      // A map in the YAML file for a flag that also takes one as text (JSON) on the command line.
      if (raw !== null && typeof raw === 'object') return JSON.stringify(raw);
      return typeof raw === 'string' ? raw : String(raw);
    case 'int':
    case 'float': {
      if (typeof raw === 'number') return raw;
      // A YAML list or map is no number, even when its text would read as one (`[4567]` → "4567").
      if (raw !== null && typeof raw === 'object')
        throw new ConfigError(`invalid value for ${where}: not a number`);
      const s = String(raw).trim();
      const n = Number(s);
      if (s === '' || !Number.isFinite(n))
        throw new ConfigError(`invalid value "${s}" for ${where}: not a number`);
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).trim().toLowerCase();
      if (['true', '1', 'yes', 'on', ''].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      throw new ConfigError(`invalid value "${raw}" for ${where}: expected true or false`);
    }
    case 'list': {
      if (Array.isArray(raw))
        return raw
          .flatMap((x) => String(x).split(','))
          .map((s) => s.trim())
          .filter(Boolean);
      return String(raw)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    }
    case 'map': {
      if (raw && typeof raw === 'object' && !Array.isArray(raw))
        return Object.fromEntries(Object.entries(raw).map(([k, x]) => [k, String(x)]));
      const s = String(raw).trim();
      if (s.startsWith('{')) {
        try {
          return coerce(spec, JSON.parse(s), source);
        } catch (e) {
          if (e instanceof ConfigError) throw e;
          throw new ConfigError(`invalid value for ${where}: not a JSON object`);
        }
      }
      // Also key=value pairs separated by commas, as on the command line.
      const out: Record<string, string> = {};
      for (const pair of s.split(',').filter(Boolean)) {
        const i = pair.indexOf('=');
        if (i <= 0) throw new ConfigError(`invalid value "${pair}" for ${where}: expected key=value`);
        out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
      }
      return out;
    }
  }
}

interface ParsedArgs {
  command: string | undefined;
  values: Map<string, unknown[]>;
  rest: string[];
}

/** Splits argv into a command word and `--flag value`, `--flag=value`, `-c value`, `--bool` forms. */
export function parseArgv(argv: string[], specs: FlagSpec[]): ParsedArgs {
  const byName = new Map<string, FlagSpec>();
  for (const s of specs) {
    byName.set(s.name, s);
    if (s.alias) byName.set(s.alias, s);
    if (s.short) byName.set(s.short, s);
  }
  const values = new Map<string, unknown[]>();
  const rest: string[] = [];
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      if (command === undefined && rest.length === 0) command = arg;
      else rest.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const spec = byName.get(name);
    if (!spec) throw new ConfigError(`unknown flag: ${arg.split('=')[0]}`);
    let value: unknown;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.type === 'bool') {
      const next = argv[i + 1];
      if (next !== undefined && /^(true|false)$/i.test(next)) {
        value = next;
        i++;
      } else value = true;
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`flag --${spec.name} needs a value`);
      value = next;
      i++;
    }
    const list = values.get(spec.name) ?? [];
    list.push(value);
    values.set(spec.name, list);
  }
  return { command, values, rest };
}

interface LoadOptions {
  specs: FlagSpec[];
  args: ParsedArgs;
  env: NodeJS.ProcessEnv;
  envPrefix: string;
  /** Flag naming the config file and the default path; a missing default file is not an error. */
  configFileFlag: string;
  defaultConfigFile: string;
}

/** Merges the four sources into raw values keyed by flag name (not yet schema-validated). */
export function mergeSources(o: LoadOptions): Record<string, unknown> {
  const bySpec = new Map(o.specs.map((s) => [s.name, s]));
  const fromFlag = (spec: FlagSpec): unknown => {
    const vals = o.args.values.get(spec.name);
    if (!vals) return undefined;
    const coerced = vals.map((x) => coerce(spec, x, 'command line'));
    if (spec.type === 'list') return coerced.flat();
    if (spec.type === 'map') return Object.assign({}, ...coerced);
    return coerced[coerced.length - 1];
  };
  const fromEnv = (spec: FlagSpec): unknown => {
    const name = spec.env ?? envName(o.envPrefix, spec.name);
    const raw = o.env[name];
    // An empty variable counts as unset (as in viper, which the reference reads its variables with):
    // `MONITOR_NAME=` in a compose file must not mean an empty name.
    return raw === undefined || raw === '' ? undefined : coerce(spec, raw, `environment variable ${name}`);
  };

  const cfgSpec = bySpec.get(o.configFileFlag);
  const explicitFile = (cfgSpec && (fromFlag(cfgSpec) ?? fromEnv(cfgSpec))) as string | undefined;
  const file = explicitFile ?? o.defaultConfigFile;
  let fileValues: Record<string, unknown> = {};
  if (existsSync(file)) {
    let doc: unknown;
    try {
      doc = parseYamlFile(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new ConfigError(`config file ${file} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
    if (doc !== null && doc !== undefined && (typeof doc !== 'object' || Array.isArray(doc)))
      throw new ConfigError(`config file ${file} must hold a mapping of flag names to values`);
    fileValues = (doc ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(fileValues)) {
      const spec = bySpec.get(key) ?? o.specs.find((s) => s.alias === key);
      if (!spec) throw new ConfigError(`config file ${file}: unknown setting "${key}"`);
    }
  } else if (explicitFile !== undefined) {
    throw new ConfigError(`config file ${file} does not exist (--${o.configFileFlag})`);
  }

  const out: Record<string, unknown> = {};
  for (const spec of o.specs) {
    let value = fromFlag(spec);
    if (value === undefined) value = fromEnv(spec);
    if (value === undefined) {
      const raw = fileValues[spec.name] ?? (spec.alias ? fileValues[spec.alias] : undefined);
      if (raw !== undefined && raw !== null) value = coerce(spec, raw, `config file ${file}`);
    }
    if (value === undefined) value = spec.default;
    if (value !== undefined) out[spec.name] = value;
  }
  out[o.configFileFlag] = file;
  return out;
}

/** Validates merged values with the program's schema; the first issue becomes a one-line error. */
export function validateConfig<S extends v.GenericSchema>(
  schema: S,
  raw: Record<string, unknown>,
): v.InferOutput<S> {
  const r = v.safeParse(schema, raw);
  if (r.success) return r.output;
  const issue = r.issues[0]!;
  const path = v.getDotPath(issue);
  if (path && issue.input === undefined) throw new ConfigError(`--${path} is required`);
  throw new ConfigError(path ? `invalid value for --${path}: ${issue.message}` : describeIssues(r.issues));
}

/** `--help` text: one line per flag with its default. */
export function helpText(usage: string, specs: FlagSpec[], envPrefix: string): string {
  const lines = [usage, '', 'Flags:'];
  for (const s of specs) {
    const flag = `  ${s.short ? `-${s.short}, ` : ''}--${s.name} ${s.type}`;
    const def =
      s.default === undefined || (Array.isArray(s.default) && s.default.length === 0)
        ? ''
        : ` (default ${JSON.stringify(s.default)})`;
    const alias = s.alias ? ` (deprecated spelling: --${s.alias})` : '';
    lines.push(`${flag.padEnd(42)} ${s.description}${def}${alias} [${s.env ?? envName(envPrefix, s.name)}]`);
  }
  return lines.join('\n');
}
