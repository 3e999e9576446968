import type { MetricPoint, MetricTag } from './point.ts';
import { Errors, fields, forEachLine, isBlank, nameValueTags, parseFloatStrict, point } from './text.ts';

// Graphite plaintext: `path value timestamp` per line. The path may carry Graphite 1.1 tags,
// `name;tag1=value1;tag2=value2`. A timestamp of -1 means "now" to carbon; here it is the
// check's execution time. Fractional timestamps are floored to whole seconds.

const FORMAT = 'graphite_plaintext';

export function parseGraphite(
  output: string,
  executed: number,
  tags: MetricTag[],
): { points: MetricPoint[]; errors: string[] } {
  const points: MetricPoint[] = [];
  const errors = new Errors();
  forEachLine(output, (line, lineNo) => {
    if (isBlank(line)) return;
    const f = fields(line);
    if (f.length !== 3) {
      errors.add(FORMAT, lineNo, `expected "path value timestamp", got ${f.length} fields`, line);
      return;
    }
    const [path, rawValue, rawTs] = f as [string, string, string];
    const value = parseFloatStrict(rawValue);
    if (value === undefined) {
      errors.add(FORMAT, lineNo, 'value is not a finite number', line);
      return;
    }
    let timestamp: number;
    if (rawTs === '-1') timestamp = executed;
    else {
      const ts = parseFloatStrict(rawTs);
      if (ts === undefined || ts < 0 || !Number.isSafeInteger(Math.floor(ts))) {
        errors.add(FORMAT, lineNo, 'timestamp is not a number of seconds', line);
        return;
      }
      timestamp = Math.floor(ts);
    }
    const semi = path.indexOf(';');
    const name = semi < 0 ? path : path.slice(0, semi);
    if (name === '') {
      errors.add(FORMAT, lineNo, 'empty metric path', line);
      return;
    }
    let own: MetricTag[] | undefined;
    if (semi >= 0) {
      own = nameValueTags(path.slice(semi + 1).split(';'), errors, FORMAT, lineNo, line);
      if (!own) return;
    }
    points.push(point(name, value, timestamp, own, tags));
  });
  return { points, errors: errors.done() };
}
