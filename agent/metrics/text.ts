import type { MetricPoint, MetricTag } from './point.ts';

// Shared plumbing for the line parsers: line iteration without split(), a strict number parser
// (Number() would take '', ' ', '0x1f' and 'Infinity'), and a bounded error list so garbage
// output cannot grow the event.

const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A decimal number (no hex, no Infinity/NaN), or undefined. */
export function parseFloatStrict(s: string): number | undefined {
  if (!FLOAT.test(s)) return undefined;
  const n = +s;
  return Number.isFinite(n) ? n : undefined;
}

/** Calls fn for each line (without its \n or \r\n), numbered from 1; blank lines included. */
export function forEachLine(text: string, fn: (line: string, lineNo: number) => void): void {
  let start = 0;
  let n = 0;
  const len = text.length;
  while (start <= len) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = len;
    const stop = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    n++;
    fn(text.slice(start, stop), n);
    start = end + 1;
  }
}

export function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/** Splits on runs of spaces/tabs, dropping empty fields. */
export function fields(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  const len = line.length;
  while (i < len) {
    while (i < len && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    if (i >= len) break;
    const start = i;
    while (i < len && line.charCodeAt(i) !== 32 && line.charCodeAt(i) !== 9) i++;
    out.push(line.slice(start, i));
  }
  return out;
}

const DIGITS = /^\d+$/;

/**
 * An epoch timestamp of unsigned digits in `unit`, as whole seconds (or undefined). Cuts digits
 * instead of dividing so 19-digit nanoseconds do not lose precision and round up a second.
 */
export function epochToSeconds(digits: string, unit: 's' | 'ms' | 'ns'): number | undefined {
  if (!DIGITS.test(digits)) return undefined;
  const drop = unit === 's' ? 0 : unit === 'ms' ? 3 : 9;
  const secs = drop === 0 ? +digits : digits.length > drop ? +digits.slice(0, digits.length - drop) : 0;
  return Number.isSafeInteger(secs) ? secs : undefined;
}

const MAX_ERRORS = 20;

/** Collects errors up to MAX_ERRORS, then only counts the rest. */
export class Errors {
  readonly list: string[] = [];
  private dropped = 0;

  add(format: string, lineNo: number, message: string, line?: string): void {
    if (this.list.length >= MAX_ERRORS) {
      this.dropped++;
      return;
    }
    const excerpt =
      line === undefined ? '' : `: ${JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line)}`;
    this.list.push(`${format} line ${lineNo}: ${message}${excerpt}`);
  }

  done(): string[] {
    if (this.dropped > 0) this.list.push(`${this.dropped} more errors not shown`);
    return this.list;
  }
}

/** A point with the check's tags appended after its own; non-finite values are refused by callers. */
export function point(
  name: string,
  value: number,
  timestamp: number,
  own: MetricTag[] | undefined,
  extra: MetricTag[],
): MetricPoint {
  let tags: MetricTag[];
  if (!own || own.length === 0) tags = extra.length === 0 ? [] : extra.slice();
  else if (extra.length === 0) tags = own;
  else tags = own.concat(extra);
  return { name, value, timestamp, tags };
}

/** A line a parser refuses; `parseLines` records its message and goes on with the next line. */
export class LineError extends Error {}

/**
 * Runs `parse` on every line that is not blank or a `#` comment, recording a LineError as that
 * line's error; the shared driver of the formats that parse a line in one go.
 */
export function parseLines(format: string, output: string, parse: (line: string) => void): string[] {
  const errors = new Errors();
  forEachLine(output, (line, lineNo) => {
    let i = 0;
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length || line[i] === '#') return;
    try {
      parse(line);
    } catch (e) {
      if (!(e instanceof LineError)) throw e;
      errors.add(format, lineNo, e.message, line);
    }
  });
  return errors.done();
}

/**
 * A line's own `name=value` tags (graphite, opentsdb). Undefined, with the error recorded against
 * the line, when a pair has no name or no value.
 */
export function nameValueTags(
  pairs: Iterable<string>,
  errors: Errors,
  format: string,
  lineNo: number,
  line: string,
): MetricTag[] | undefined {
  const tags: MetricTag[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1) {
      errors.add(format, lineNo, `bad tag ${JSON.stringify(pair)} (want name=value)`, line);
      return undefined;
    }
    tags.push({ name: pair.slice(0, eq), value: pair.slice(eq + 1) });
  }
  return tags;
}
