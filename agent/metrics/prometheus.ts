import type { MetricPoint, MetricTag } from './point.ts';
import { LineError, parseFloatStrict, parseLines, point } from './text.ts';

// Prometheus text exposition format 0.0.4: `name{label="value",...} value [timestamp_ms]`.
// Comments (# HELP, # TYPE, others) are skipped; histogram and summary series (_bucket, _sum,
// _count, quantile) are plain samples with their labels as tags. NaN and ±Inf are valid samples
// but cannot be carried by a metric point (JSON has no such numbers), so they are skipped
// without an error. The timestamp is milliseconds, floored to seconds; without one, the
// execution time.

const FORMAT = 'prometheus_text';

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57);
}

/** Reads a double-quoted string at `i` (which is the opening quote) with \\ \" \n escapes. */
function readQuoted(line: string, i: number): [string, number] {
  let out = '';
  let start = ++i;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 34) return [out + line.slice(start, i), i + 1];
    if (c === 92) {
      const next = line[i + 1];
      if (next === undefined) break;
      out += line.slice(start, i) + (next === 'n' ? '\n' : next);
      i += 2;
      start = i;
      continue;
    }
    i++;
  }
  throw new LineError('unterminated quoted string');
}

function skipSpace(line: string, i: number): number {
  while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
  return i;
}

function readName(line: string, i: number): [string, number] {
  const start = i;
  if (i < line.length && isNameStart(line.charCodeAt(i))) {
    i++;
    while (i < line.length && isNameChar(line.charCodeAt(i))) i++;
  }
  return [line.slice(start, i), i];
}

/** Go's ParseFloat spellings Prometheus accepts for special values. */
function sampleValue(raw: string): number | undefined {
  const lower = raw.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  return parseFloatStrict(raw);
}

function parseLine(line: string, executed: number, tags: MetricTag[], points: MetricPoint[]): void {
  let i = skipSpace(line, 0);
  const read = readName(line, i);
  let name = read[0];
  i = read[1];
  let own: MetricTag[] | undefined;
  if (line.charCodeAt(i) === 123 /* { */) {
    i = skipSpace(line, i + 1);
    while (line.charCodeAt(i) !== 125 /* } */) {
      if (i >= line.length) throw new LineError("missing '}'");
      let label: string;
      if (line.charCodeAt(i) === 34) {
        [label, i] = readQuoted(line, i);
        i = skipSpace(line, i);
        // The UTF-8 form puts a quoted metric name first inside the braces.
        if (name === '' && (line.charCodeAt(i) === 44 || line.charCodeAt(i) === 125)) {
          name = label;
          if (line.charCodeAt(i) === 44) i = skipSpace(line, i + 1);
          continue;
        }
      } else {
        [label, i] = readName(line, i);
        if (label === '') throw new LineError('bad label name');
        i = skipSpace(line, i);
      }
      if (line.charCodeAt(i) !== 61) throw new LineError(`label ${JSON.stringify(label)} without '='`);
      i = skipSpace(line, i + 1);
      if (line.charCodeAt(i) !== 34)
        throw new LineError(`label ${JSON.stringify(label)} value is not quoted`);
      let value: string;
      [value, i] = readQuoted(line, i);
      if (label === '__name__' && name === '') name = value;
      else (own ??= []).push({ name: label, value });
      i = skipSpace(line, i);
      if (line.charCodeAt(i) === 44) i = skipSpace(line, i + 1);
      else if (line.charCodeAt(i) !== 125) throw new LineError("expected ',' or '}' after a label");
    }
    i++;
  }
  if (name === '') throw new LineError('missing metric name');
  const valueStart = skipSpace(line, i);
  if (valueStart === i) throw new LineError('missing value');
  let j = valueStart;
  while (j < line.length && line.charCodeAt(j) !== 32 && line.charCodeAt(j) !== 9) j++;
  const value = sampleValue(line.slice(valueStart, j));
  if (value === undefined) throw new LineError('value is not a number');
  let timestamp = executed;
  const tsStart = skipSpace(line, j);
  if (tsStart < line.length) {
    let k = tsStart;
    while (k < line.length && line.charCodeAt(k) !== 32 && line.charCodeAt(k) !== 9) k++;
    const rawTs = line.slice(tsStart, k);
    if (!/^-?\d+$/.test(rawTs)) throw new LineError('timestamp is not milliseconds since the epoch');
    timestamp = Math.floor(+rawTs / 1000);
    if (!Number.isSafeInteger(timestamp)) throw new LineError('timestamp is out of range');
    if (skipSpace(line, k) < line.length) throw new LineError('unexpected text after the timestamp');
  }
  if (!Number.isFinite(value)) return;
  points.push(point(name, value, timestamp, own, tags));
}

export function parsePrometheus(
  output: string,
  executed: number,
  tags: MetricTag[],
): { points: MetricPoint[]; errors: string[] } {
  const points: MetricPoint[] = [];
  const errors = parseLines(FORMAT, output, (line) => parseLine(line, executed, tags, points));
  return { points, errors };
}
