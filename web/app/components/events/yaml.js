// @ts-check

// A small YAML emitter for "copy as YAML": JSON values only (what the API gives), block style,
// two-space indents, strings quoted whenever a plain scalar could be read back as something else.

/** Plain scalars YAML 1.1 or 1.2 would read as booleans, null or numbers. */
const RESERVED =
  /^(?:~|null|true|false|yes|no|on|off|y|n|[-+]?(?:\.inf|\.nan|\d[\d_]*(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|0x[\da-f]+|0o[0-7]+))$/i;

/** @param {string} s */
function plainOk(s) {
  if (s === '' || s !== s.trim() || RESERVED.test(s)) return false;
  // Indicators that may not start a plain scalar, and sequences that end one early.
  if (/^[-?:,[\]{}#&*!|>'"%@`]/.test(s)) return false;
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (/: |:$| #|[\t\u0000-\u001f\u007f\u0085\u2028\u2029\ufeff]/.test(s)) return false;
  return true;
}

/** A double-quoted scalar: JSON's escapes are valid YAML escapes. @param {string} s */
const quoted = (s) => JSON.stringify(s);

/** @param {string} key */
const keyText = (key) => (plainOk(key) ? key : quoted(key));

/**
 * @param {string} s
 * @param {string} indent of the lines of a block scalar
 */
function scalarString(s, indent) {
  // Several lines read best as a literal block, unless spacing would not survive one: its
  // indentation is taken from the first line that is not empty, and lines of spaces only are read
  // as empty lines.
  if (
    s.includes('\n') &&
    /^\n*[^\n ]/.test(s) &&
    !/^ +$/m.test(s) &&
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    !/[\r\t\u0000-\u0008\u000b-\u001f\u007f\u0085\u2028\u2029]/.test(s)
  ) {
    const chomp = s.endsWith('\n') ? (s.endsWith('\n\n') ? '+' : '') : '-';
    const body = (chomp === '-' ? s : s.replace(/\n$/, ''))
      .split('\n')
      .map((l) => (l === '' ? '' : indent + l))
      .join('\n');
    return `|${chomp}\n${body}`;
  }
  return plainOk(s) ? s : quoted(s);
}

/** @param {unknown} v */
const isBlock = (v) =>
  v !== null &&
  typeof v === 'object' &&
  (Array.isArray(v) ? v.length > 0 : Object.keys(/** @type {object} */ (v)).length > 0);

/**
 * @param {unknown} v
 * @param {string} indent of the value's own lines (block values)
 * @returns {string}
 */
function scalar(v, indent) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number')
    return Number.isFinite(v) ? String(v) : v !== v ? '.nan' : v > 0 ? '.inf' : '-.inf';
  if (typeof v === 'string') return scalarString(v, indent);
  if (Array.isArray(v)) return '[]';
  if (typeof v === 'object') return '{}';
  return quoted(String(v));
}

/**
 * @param {unknown} v a block value (non-empty array or object)
 * @param {string} indent
 * @returns {string[]}
 */
function block(v, indent) {
  /** @type {string[]} */
  const lines = [];
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isBlock(item)) {
        // The first line of the item's block follows the dash.
        const sub = block(item, inner);
        lines.push(`${indent}- ${sub[0]?.slice(inner.length) ?? ''}`, ...sub.slice(1));
      } else lines.push(`${indent}- ${scalar(item, inner)}`);
    }
    return lines;
  }
  for (const [k, item] of Object.entries(/** @type {Record<string, unknown>} */ (v))) {
    if (item === undefined) continue;
    if (isBlock(item)) {
      lines.push(`${indent}${keyText(k)}:`);
      // Sequences under a key are indented too (either style is valid; this one reads better).
      lines.push(...block(item, inner));
    } else lines.push(`${indent}${keyText(k)}: ${scalar(item, inner)}`);
  }
  return lines;
}

/**
 * YAML text of a JSON value, ending with a newline.
 * @param {unknown} value
 */
export function toYaml(value) {
  return `${isBlock(value) ? block(value, '').join('\n') : scalar(value, '  ')}\n`;
}
