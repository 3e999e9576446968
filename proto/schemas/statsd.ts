import * as v from 'valibot';

// One StatsD line as the agent's metrics listener receives it:
//   <name>:<value>|<type>[|@<sample rate>][|#<tag>[:<value>],...]
// Types: c (counter), g (gauge; a leading + or - changes it), ms and h (timer/histogram), s (set).

const STATSD_TYPES = ['c', 'g', 'ms', 'h', 's'] as const;
type StatsdType = (typeof STATSD_TYPES)[number];

export interface StatsdTag {
  name: string;
  value: string;
}

export interface StatsdMetric {
  name: string;
  type: StatsdType;
  /** The number (0 for sets). */
  value: number;
  /** The member of a set. */
  member?: string;
  /** Gauges only: `+n` / `-n` change the last value instead of replacing it. */
  relative?: boolean;
  /** In (0, 1]; 1 when not given. */
  rate: number;
  tags: StatsdTag[];
}

const MAX_NAME = 512;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function parseTags(text: string): StatsdTag[] | string {
  const tags: StatsdTag[] = [];
  for (const raw of text.split(',')) {
    if (raw === '') return 'empty tag';
    const i = raw.indexOf(':');
    const name = i < 0 ? raw : raw.slice(0, i);
    if (name === '') return `tag "${raw}" has no name`;
    tags.push({ name, value: i < 0 ? '' : raw.slice(i + 1) });
  }
  return tags;
}

/** The metric of one line, or the reason it is not one. */
export function parseStatsdLine(line: string): StatsdMetric | string {
  const colon = line.indexOf(':');
  if (colon < 0) return 'no ":" between name and value';
  const name = line.slice(0, colon);
  // Control characters are exactly what this refuses.
  // eslint-disable-next-line no-control-regex
  if (name === '' || name.length > MAX_NAME || /[\s|#@\x00-\x1f\x7f]/.test(name))
    return `bad metric name "${name.slice(0, 40)}"`;
  const [valueText = '', typeText = '', ...extras] = line.slice(colon + 1).split('|');
  if (!(STATSD_TYPES as readonly string[]).includes(typeText)) return `unknown type "${typeText}"`;
  const type = typeText as StatsdType;
  let rate = 1;
  let tags: StatsdTag[] = [];
  let seenRate = false,
    seenTags = false;
  for (const extra of extras) {
    if (extra.startsWith('@') && !seenRate) {
      if (!NUMBER.test(extra.slice(1))) return `bad sample rate "${extra}"`;
      rate = Number(extra.slice(1));
      if (!(rate > 0 && rate <= 1)) return `sample rate ${rate} is not in (0, 1]`;
      seenRate = true;
    } else if (extra.startsWith('#') && !seenTags) {
      const t = parseTags(extra.slice(1));
      if (typeof t === 'string') return t;
      tags = t;
      seenTags = true;
    } else {
      return `unexpected section "${extra.slice(0, 40)}"`;
    }
  }
  if (type === 's') {
    if (valueText === '') return 'empty set member';
    return { name, type, value: 0, member: valueText, rate, tags };
  }
  if (!NUMBER.test(valueText)) return `value "${valueText.slice(0, 40)}" is not a number`;
  const value = Number(valueText);
  if (!Number.isFinite(value)) return `value "${valueText.slice(0, 40)}" is not finite`;
  const relative = type === 'g' && (valueText.startsWith('+') || valueText.startsWith('-'));
  return { name, type, value, rate, tags, ...(relative ? { relative } : {}) };
}

/** A line of a datagram, parsed at the edge; the issue message says why a line is refused. */
export const StatsdLine = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const r = parseStatsdLine(dataset.value);
    if (typeof r === 'string') {
      addIssue({ message: r });
      return NEVER;
    }
    return r;
  }),
);
