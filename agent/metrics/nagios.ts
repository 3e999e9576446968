import type { MetricPoint, MetricTag } from './point.ts';
import { Errors, point } from './text.ts';

// Nagios plugin perfdata (Nagios Plugin Development Guidelines, "Plugin Output"):
//   TEXT | PERFDATA
//   LONG TEXT ...
//   LONG TEXT | PERFDATA 2
//   PERFDATA 3
// Items are `'label'=value[UOM];[warn];[crit];[min];[max]`; only the value becomes a point, at the
// time the check was executed. A value of `U` (undetermined) is valid perfdata and is skipped.

const FORMAT = 'nagios_perfdata';
// A decimal value and an optional unit (s ms us % B KB MB GB TB c, and what plugins actually emit).
const VALUE = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([A-Za-z%]*)$/;

/** The perfdata sections of an output, each with the line it starts on (for error messages). */
function perfdataSections(output: string): Array<{ text: string; lineNo: number }> {
  const sections: Array<{ text: string; lineNo: number }> = [];
  const nl = output.indexOf('\n');
  const first = nl < 0 ? output : output.slice(0, nl);
  const bar = first.indexOf('|');
  if (bar >= 0) sections.push({ text: first.slice(bar + 1), lineNo: 1 });
  if (nl < 0) return sections;
  // In the long text, the first `|` starts perfdata that runs to the end of the output.
  const rest = output.slice(nl + 1);
  const bar2 = rest.indexOf('|');
  if (bar2 >= 0) {
    let lineNo = 2;
    for (let i = rest.indexOf('\n'); i >= 0 && i < bar2; i = rest.indexOf('\n', i + 1)) lineNo++;
    sections.push({ text: rest.slice(bar2 + 1), lineNo });
  }
  return sections;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

export function parseNagios(
  output: string,
  executed: number,
  tags: MetricTag[],
): { points: MetricPoint[]; errors: string[] } {
  const points: MetricPoint[] = [];
  const errors = new Errors();
  const sections = perfdataSections(output);
  if (sections.length === 0) {
    errors.add(FORMAT, 1, "no performance data (no '|' in the output)");
    return { points, errors: errors.done() };
  }
  for (const { text, lineNo: startLine } of sections) {
    let lineNo = startLine;
    let i = 0;
    const len = text.length;
    while (i < len) {
      while (i < len && isSpace(text.charCodeAt(i))) {
        if (text.charCodeAt(i) === 10) lineNo++;
        i++;
      }
      if (i >= len) break;
      const itemStart = i;
      let label: string;
      if (text.charCodeAt(i) === 39) {
        // Quoted label: may hold spaces; '' is a literal quote.
        let j = i + 1;
        let buf = '';
        let closed = false;
        while (j < len) {
          const q = text.indexOf("'", j);
          if (q < 0) break;
          buf += text.slice(j, q);
          if (text.charCodeAt(q + 1) === 39) {
            buf += "'";
            j = q + 2;
            continue;
          }
          j = q + 1;
          closed = true;
          break;
        }
        if (!closed) {
          errors.add(FORMAT, lineNo, 'unterminated quoted label', text.slice(itemStart));
          break;
        }
        label = buf;
        i = j;
      } else {
        let j = i;
        while (j < len && text.charCodeAt(j) !== 61 && !isSpace(text.charCodeAt(j))) j++;
        label = text.slice(i, j);
        i = j;
      }
      let end = i;
      while (end < len && !isSpace(text.charCodeAt(end))) end++;
      const item = text.slice(itemStart, end);
      if (text.charCodeAt(i) !== 61) {
        errors.add(FORMAT, lineNo, "perfdata item without '='", item);
        i = end;
        continue;
      }
      const data = text.slice(i + 1, end);
      i = end;
      if (label === '') {
        errors.add(FORMAT, lineNo, 'perfdata item with an empty label', item);
        continue;
      }
      const semi = data.indexOf(';');
      const raw = semi < 0 ? data : data.slice(0, semi);
      if (raw === 'U') continue;
      const m = VALUE.exec(raw);
      const value = m ? +m[1]! : NaN;
      if (!m || !Number.isFinite(value)) {
        errors.add(FORMAT, lineNo, 'value is not a number', item);
        continue;
      }
      points.push(point(label, value, executed, undefined, tags));
    }
  }
  return { points, errors: errors.done() };
}
