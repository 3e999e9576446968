import { usageError } from '../errors.ts';

// `--format template=TEXT`: a small subset of Go's text/template, applied to each item. Text is
// copied; `{{ .a.b }}` writes a field (`{{ . }}` the item), `{{ index .metadata.labels "k" }}` a
// key that is not an identifier, `{{ "text" }}` a string. `{{-` and `-}}` trim the white space
// before or after. A missing field writes `<no value>`, as Go does; objects and lists are written
// as JSON.

const NO_VALUE = '<no value>';

type Token = { kind: 'text'; text: string } | { kind: 'action'; body: string };

function tokenize(template: string): Token[] {
  const out: Token[] = [];
  let rest = template;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) {
      out.push({ kind: 'text', text: rest });
      return out;
    }
    const close = rest.indexOf('}}', open + 2);
    if (close < 0) throw usageError(`template: unclosed action after "${rest.slice(open, open + 20)}"`);
    let text = rest.slice(0, open);
    let body = rest.slice(open + 2, close);
    if (body.startsWith('-') && /^-\s/.test(body)) {
      text = text.trimEnd();
      body = body.slice(1);
    }
    let after = rest.slice(close + 2);
    if (/\s-$/.test(body)) {
      body = body.slice(0, -1);
      after = after.trimStart();
    }
    out.push({ kind: 'text', text }, { kind: 'action', body: body.trim() });
    rest = after;
  }
}

/** The words of an action: field paths, quoted strings and names. */
function words(body: string): string[] {
  const out: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|`[^`]*`|[^\s"`]+)\s*/y;
  while (re.lastIndex < body.length) {
    const m = re.exec(body);
    if (!m) throw usageError(`template: cannot read "{{ ${body} }}"`);
    out.push(m[1]!);
  }
  return out;
}

function fieldOf(data: unknown, path: string): unknown {
  if (path === '.') return data;
  let cur = data;
  for (const key of path.slice(1).split('.')) {
    if (cur === null || typeof cur !== 'object' || !(key in (cur as object))) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function operand(word: string, data: unknown): unknown {
  if (word.startsWith('.')) return fieldOf(data, word);
  if (word.startsWith('"')) return JSON.parse(word) as string;
  if (word.startsWith('`')) return word.slice(1, -1);
  if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
  throw usageError(`template: "${word}" is not a field (.name), a string or a number`);
}

function evaluate(body: string, data: unknown): unknown {
  const w = words(body);
  if (w.length === 0) throw usageError('template: empty action {{ }}');
  if (w[0] === 'index') {
    if (w.length < 3) throw usageError('template: index needs a value and at least one key');
    let cur = operand(w[1]!, data);
    for (const k of w.slice(2)) {
      const key = operand(k, data);
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string, unknown>)[String(key)];
    }
    return cur;
  }
  if (w.length > 1)
    throw usageError(`template: unsupported action "{{ ${body} }}" (fields, strings and index only)`);
  return operand(w[0]!, data);
}

function show(value: unknown): string {
  if (value === undefined || value === null) return NO_VALUE;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A compiled template: checked once, then applied to each item. */
export function compileTemplate(template: string): (data: unknown) => string {
  const tokens = tokenize(template);
  // Check every action once, so a bad one is reported even for an empty list.
  for (const t of tokens) if (t.kind === 'action') evaluate(t.body, {});
  return (data) => tokens.map((t) => (t.kind === 'text' ? t.text : show(evaluate(t.body, data)))).join('');
}
