// Token substitution (docs/compatibility.md#tokens): a subset of Go templates over every string of a check or
// hook, with the entity as data (metadata fields also at the top level). Supported: `{{ .a.b }}`, `{{ .a.b |
// default "x" }}`, `{{ default "x" .a.b }}`, `{{ assetPath "name" }}` and string literals. A token that finds
// no value fails the whole substitution: running a command with a hole in it would report the wrong thing.

export class TokenSubstitutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenSubstitutionError';
  }
}

/** The template data: the entity as JSON, with its metadata fields hoisted to the top level. */
export function tokenData(entity: object): Record<string, unknown> {
  const json = JSON.parse(JSON.stringify(entity)) as Record<string, unknown>;
  const meta =
    json.metadata && typeof json.metadata === 'object' ? (json.metadata as Record<string, unknown>) : {};
  return { ...json, ...meta };
}

const NO_VALUE = Symbol('no value');
type Value = unknown | typeof NO_VALUE;

/** Splits an action into words: strings in double or back quotes, `|`, and bare words. */
function lex(action: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < action.length) {
    const c = action[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '|') {
      words.push('|');
      i++;
      continue;
    }
    if (c === '"' || c === '`') {
      let j = i + 1;
      let s = '';
      while (j < action.length && action[j] !== c) {
        if (c === '"' && action[j] === '\\' && j + 1 < action.length) {
          j++;
          s += action[j] === 'n' ? '\n' : action[j] === 't' ? '\t' : action[j];
        } else s += action[j];
        j++;
      }
      if (j >= action.length) throw new TokenSubstitutionError(`unterminated quoted string in {{${action}}}`);
      words.push(JSON.stringify(s));
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < action.length && !/[\s|]/.test(action[j]!)) j++;
    words.push(action.slice(i, j));
    i = j;
  }
  return words;
}

function lookup(data: Record<string, unknown>, path: string): Value {
  if (path === '.') return data;
  let cur: unknown = data;
  for (const key of path.slice(1).split('.')) {
    if (cur === null || typeof cur !== 'object' || !(key in (cur as object))) return NO_VALUE;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur === null || cur === undefined ? NO_VALUE : cur;
}

function operand(word: string, data: Record<string, unknown>, action: string): Value {
  if (word.startsWith('"')) return JSON.parse(word) as string;
  if (word.startsWith('.')) return lookup(data, word);
  if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
  if (word === 'true' || word === 'false') return word === 'true';
  throw new TokenSubstitutionError(
    `unsupported token {{${action}}}: "${word}" is not a field, a string or a function`,
  );
}

/** Go's notion of "empty" that `default` replaces. */
function isEmpty(v: Value): boolean {
  return (
    v === NO_VALUE ||
    v === '' ||
    v === 0 ||
    v === false ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && v !== null && Object.keys(v).length === 0)
  );
}

function call(fn: string, args: Value[], action: string): Value {
  if (fn === 'default') {
    if (args.length < 1 || args.length > 2)
      throw new TokenSubstitutionError(`default takes a default value and a value in {{${action}}}`);
    const value = args.length === 2 ? args[1] : NO_VALUE;
    return isEmpty(value) ? args[0] : value;
  }
  if (fn === 'assetPath') {
    if (args.length !== 1 || typeof args[0] !== 'string')
      throw new TokenSubstitutionError(`assetPath takes one asset name in {{${action}}}`);
    return `$${args[0].toUpperCase().replace(/[^A-Z0-9_]/g, '_')}_PATH`;
  }
  throw new TokenSubstitutionError(`unknown function "${fn}" in {{${action}}}`);
}

function evalCommand(words: string[], piped: Value[], data: Record<string, unknown>, action: string): Value {
  if (words.length === 0) throw new TokenSubstitutionError(`empty command in {{${action}}}`);
  const [head, ...rest] = words as [string, ...string[]];
  if (head === 'default' || head === 'assetPath')
    return call(head, [...rest.map((w) => operand(w, data, action)), ...piped], action);
  if (rest.length > 0 || piped.length > 0)
    throw new TokenSubstitutionError(`unsupported token {{${action}}}`);
  return operand(head, data, action);
}

function format(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** Substitutes the tokens of one string; throws TokenSubstitutionError naming an unmatched or bad token. */
export function substituteString(text: string, data: Record<string, unknown>): string {
  if (!text.includes('{{')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, open);
    const close = text.indexOf('}}', open + 2);
    if (close < 0) throw new TokenSubstitutionError(`unclosed token in "${text.slice(open, open + 60)}"`);
    let action = text.slice(open + 2, close);
    // Go's whitespace trimming markers: `{{- x -}}`.
    if (action.startsWith('- ')) {
      out = out.trimEnd();
      action = action.slice(1);
    }
    let trimAfter = false;
    if (action.endsWith(' -')) {
      trimAfter = true;
      action = action.slice(0, -1);
    }
    const stages: string[][] = [[]];
    for (const w of lex(action)) {
      if (w === '|') stages.push([]);
      else stages[stages.length - 1]!.push(w);
    }
    let value: Value = NO_VALUE;
    stages.forEach((words, n) => {
      value = evalCommand(words, n === 0 ? [] : [value], data, action);
    });
    if (value === NO_VALUE) throw new TokenSubstitutionError(`unmatched token: {{${action}}}`);
    out += format(value);
    i = close + 2;
    if (trimAfter) {
      while (i < text.length && /\s/.test(text[i]!)) i++;
    }
  }
  return out;
}

/** Substitutes every string inside a JSON value (keys stay as they are); returns a new value. */
export function substituteTokens<T>(
  value: T,
  data: Record<string, unknown>,
  skipKeys: ReadonlySet<string> = new Set(),
): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return substituteString(v, data);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = skipKeys.has(k) ? x : walk(x);
      return out;
    }
    return v;
  };
  return walk(JSON.parse(JSON.stringify(value))) as T;
}
