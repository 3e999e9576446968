import type { MetricPoint, MetricTag } from './point.ts';
import {
  epochToSeconds,
  Errors,
  fields,
  forEachLine,
  isBlank,
  nameValueTags,
  parseFloatStrict,
  point,
} from './text.ts';

// OpenTSDB telnet-style lines: `[put ]name timestamp value [tagk=tagv ...]`. Like OpenTSDB, a
// timestamp that does not fit in 32 bits (13 digits today) is milliseconds.

const FORMAT = 'opentsdb_line';
const MAX_SECONDS = 0xffffffff;

export function parseOpenTSDB(
  output: string,
  executed: number,
  tags: MetricTag[],
): { points: MetricPoint[]; errors: string[] } {
  void executed;
  const points: MetricPoint[] = [];
  const errors = new Errors();
  forEachLine(output, (line, lineNo) => {
    if (isBlank(line)) return;
    const f = fields(line);
    const at = f[0] === 'put' ? 1 : 0;
    if (f.length - at < 3) {
      errors.add(FORMAT, lineNo, 'expected "name timestamp value [tag=value ...]"', line);
      return;
    }
    const name = f[at]!;
    const rawTs = f[at + 1]!;
    let timestamp = epochToSeconds(rawTs, 's');
    if (timestamp !== undefined && timestamp > MAX_SECONDS)
      timestamp = rawTs.length <= 13 ? epochToSeconds(rawTs, 'ms') : undefined;
    if (timestamp === undefined) {
      errors.add(FORMAT, lineNo, 'timestamp is not seconds or milliseconds since the epoch', line);
      return;
    }
    const value = parseFloatStrict(f[at + 2]!);
    if (value === undefined) {
      errors.add(FORMAT, lineNo, 'value is not a finite number', line);
      return;
    }
    let own: MetricTag[] | undefined;
    if (f.length > at + 3) {
      own = nameValueTags(f.slice(at + 3), errors, FORMAT, lineNo, line);
      if (!own) return;
    }
    points.push(point(name, value, timestamp, own, tags));
  });
  return { points, errors: errors.done() };
}
