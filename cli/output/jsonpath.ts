import { JSONPath } from 'jsonpath-plus';
import { usageError } from '../errors.ts';

// `--format jsonpath=TEXT`, in kubectl's manner: text is copied, `{.items[*].metadata.name}` writes
// what a JSONPath expression selects (several results separated by spaces), `{"\n"}` a string
// with escapes, and `{range .items[*]}...{end}` repeats its part for each selected value, inside
// which expressions start from that value. Lists are given as `{"items": [...]}`. The expressions
// are evaluated by jsonpath-plus (its filters in its safe mode, never JavaScript's eval).

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'expr'; path: string }
  | { kind: 'range'; path: string; body: Node[] };

/** The `{...}` parts of a template and the text between them. */
function split(template: string): { kind: 'text' | 'brace'; text: string }[] {
  const out: { kind: 'text' | 'brace'; text: string }[] = [];
  let i = 0;
  let text = '';
  while (i < template.length) {
    const c = template[i]!;
    if (c !== '{') {
      text += c;
      i++;
      continue;
    }
    let j = i + 1;
    let quote: string | undefined;
    for (; j < template.length; j++) {
      const d = template[j]!;
      if (quote) {
        if (d === '\\') j++;
        else if (d === quote) quote = undefined;
      } else if (d === '"' || d === "'") quote = d;
      else if (d === '}') break;
    }
    if (j >= template.length) throw usageError(`jsonpath: unclosed "{" in "${template}"`);
    if (text) out.push({ kind: 'text', text });
    text = '';
    out.push({ kind: 'brace', text: template.slice(i + 1, j).trim() });
    i = j + 1;
  }
  if (text) out.push({ kind: 'text', text });
  return out;
}

/** `.a.b` or `@.a` or `$.a` as a JSONPath starting at `$`. */
function toPath(expr: string): string {
  if (expr === '.' || expr === '@') return '$';
  if (expr.startsWith('$')) return expr;
  if (expr.startsWith('@')) return `$${expr.slice(1)}`;
  if (expr.startsWith('.') || expr.startsWith('[')) return `$${expr}`;
  return `$.${expr}`;
}

function parse(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  for (const part of split(template)) {
    const into = stack[stack.length - 1]!;
    if (part.kind === 'text') {
      into.push({ kind: 'text', text: part.text });
    } else if (/^range\s/.test(part.text)) {
      const node: Node = { kind: 'range', path: toPath(part.text.slice(6).trim()), body: [] };
      into.push(node);
      stack.push(node.body);
    } else if (part.text === 'end') {
      if (stack.length === 1) throw usageError('jsonpath: {end} without {range}');
      stack.pop();
    } else if (/^(["']).*\1$/s.test(part.text)) {
      const inner = part.text
        .slice(1, -1)
        .replace(/\\(.)/g, (_, ch: string) =>
          ch === 'n' ? '\n' : ch === 't' ? '\t' : ch === 'r' ? '\r' : ch,
        );
      into.push({ kind: 'text', text: inner });
    } else if (part.text === '') {
      throw usageError('jsonpath: empty {}');
    } else {
      into.push({ kind: 'expr', path: toPath(part.text) });
    }
  }
  if (stack.length > 1) throw usageError('jsonpath: {range} without {end}');
  return root;
}

function select(path: string, data: unknown): unknown[] {
  try {
    return JSONPath({ path, json: data as object, wrap: true, eval: 'safe' }) as unknown[];
  } catch (err) {
    throw usageError(`jsonpath: ${path}: ${(err as Error).message}`);
  }
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function run(nodes: Node[], data: unknown): string {
  let out = '';
  for (const n of nodes) {
    if (n.kind === 'text') out += n.text;
    else if (n.kind === 'expr') out += select(n.path, data).map(show).join(' ');
    else {
      let values = select(n.path, data);
      // `{range .items}` ranges over the list itself, as kubectl does.
      if (values.length === 1 && Array.isArray(values[0])) values = values[0];
      for (const v of values) out += run(n.body, v);
    }
  }
  return out;
}

/** A compiled JSONPath template. */
export function compileJsonPath(template: string): (data: unknown) => string {
  const nodes = parse(template);
  return (data) => run(nodes, data);
}
