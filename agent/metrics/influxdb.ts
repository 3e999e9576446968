import type { MetricPoint, MetricTag } from './point.ts';
import { epochToSeconds, LineError, parseFloatStrict, parseLines, point } from './text.ts';

// InfluxDB line protocol: `measurement[,tag=v...] field=value[,field=value...] [timestamp]`.
// Each numeric field becomes a point `measurement.field` with the measurement's tags. Integers
// (`12i`), unsigned (`12u`) and floats are kept; booleans become 1 and 0; string fields carry
// no number and are skipped. The timestamp is nanoseconds; without one, the execution time.
// Like InfluxDB, one bad field rejects the whole line.

const FORMAT = 'influxdb_line';
const TRUE = new Set(['t', 'T', 'true', 'True', 'TRUE']);
const FALSE = new Set(['f', 'F', 'false', 'False', 'FALSE']);
const INT = /^[+-]?\d+$/;
const UINT = /^\d+$/;

/** Reads an escaped token up to an unescaped stop character; `\` escapes the next character. */
function readToken(line: string, i: number, stops: string): [string, number] {
  let out = '';
  let start = i;
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === '\\' && i + 1 < line.length) {
      const next = line[i + 1]!;
      // Only the protocol's special characters are escapes; a lone backslash stays literal.
      if (next === ',' || next === ' ' || next === '=' || next === '\\' || next === '"') {
        out += line.slice(start, i) + next;
        i += 2;
        start = i;
        continue;
      }
    }
    if (stops.includes(ch)) break;
    i++;
  }
  return [out + line.slice(start, i), i];
}

function fieldValue(raw: string): number | undefined | null {
  const last = raw.charCodeAt(raw.length - 1);
  if (last === 105 /* i */) {
    const body = raw.slice(0, -1);
    return INT.test(body) ? +body : null;
  }
  if (last === 117 /* u */) {
    const body = raw.slice(0, -1);
    return UINT.test(body) ? +body : null;
  }
  if (TRUE.has(raw)) return 1;
  if (FALSE.has(raw)) return 0;
  return parseFloatStrict(raw) ?? null;
}

function parseLine(line: string, executed: number, tags: MetricTag[], points: MetricPoint[]): void {
  let i = 0;
  while (line[i] === ' ' || line[i] === '\t') i++;
  const [measurement, afterName] = readToken(line, i, ', ');
  if (measurement === '') throw new LineError('missing measurement');
  i = afterName;
  let own: MetricTag[] | undefined;
  while (line[i] === ',') {
    const [key, k] = readToken(line, i + 1, '=, ');
    if (line[k] !== '=') throw new LineError(`tag ${JSON.stringify(key)} without '='`);
    const [value, v] = readToken(line, k + 1, ', ');
    if (key === '' || value === '') throw new LineError('empty tag name or value');
    (own ??= []).push({ name: key, value });
    i = v;
  }
  if (line[i] !== ' ') throw new LineError('missing fields');
  while (line[i] === ' ') i++;
  const found: Array<[string, number]> = [];
  let any = false;
  for (;;) {
    const [key, k] = readToken(line, i, '=, ');
    if (key === '' || line[k] !== '=') throw new LineError('field without name=value');
    i = k + 1;
    any = true;
    if (line[i] === '"') {
      // A string field: skip to the closing quote, honouring \" and \\.
      i++;
      while (i < line.length && line[i] !== '"') i += line[i] === '\\' ? 2 : 1;
      if (i >= line.length) throw new LineError(`unterminated string in field ${JSON.stringify(key)}`);
      i++;
    } else {
      let j = i;
      while (j < line.length && line[j] !== ',' && line[j] !== ' ') j++;
      const v = fieldValue(line.slice(i, j));
      if (v === null || v === undefined || !Number.isFinite(v))
        throw new LineError(`field ${JSON.stringify(key)} has a bad value`);
      found.push([key, v]);
      i = j;
    }
    if (line[i] === ',') {
      i++;
      continue;
    }
    break;
  }
  if (!any) throw new LineError('missing fields');
  while (line[i] === ' ') i++;
  let timestamp = executed;
  if (i < line.length) {
    let j = i;
    while (j < line.length && line[j] !== ' ' && line[j] !== '\t' && line[j] !== '\r') j++;
    const ts = epochToSeconds(line.slice(i, j), 'ns');
    if (ts === undefined) throw new LineError('timestamp is not nanoseconds since the epoch');
    timestamp = ts;
    while (j < line.length && (line[j] === ' ' || line[j] === '\t')) j++;
    if (j < line.length) throw new LineError('unexpected text after the timestamp');
  }
  for (const [field, value] of found)
    points.push(point(`${measurement}.${field}`, value, timestamp, own, tags));
}

export function parseInflux(
  output: string,
  executed: number,
  tags: MetricTag[],
): { points: MetricPoint[]; errors: string[] } {
  const points: MetricPoint[] = [];
  const errors = parseLines(FORMAT, output, (line) => parseLine(line, executed, tags, points));
  return { points, errors };
}
