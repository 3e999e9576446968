/**
 * Standard 5-field cron (minute hour day-of-month month day-of-week) with `*`, lists, ranges,
 * steps, month and day names, `?` as `*`, the @yearly/@monthly/@weekly/@daily/@midnight/@hourly
 * shorthands, and an optional `CRON_TZ=<zone>` or `TZ=<zone>` prefix. Without a prefix times are
 * UTC (the backend's nodes may run in different local zones; UTC keeps them agreeing).
 * Day-of-month and day-of-week combine as in Vixie cron and robfig/cron: when both are restricted,
 * a day matching either one matches.
 */

export class CronError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronError';
  }
}

export interface CronSchedule {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** A field written as `*` or `?` (with or without a step) leaves the day choice to the other. */
  daysStar: boolean;
  weekdaysStar: boolean;
  timeZone?: string;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const SHORTHANDS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  nameBase?: number;
}
const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  // 7 is Sunday as well as 0.
  { name: 'day of week', min: 0, max: 7, names: DAYS, nameBase: 0 },
];

function value(text: string, f: FieldSpec): number {
  const lower = text.toLowerCase();
  const named = f.names?.indexOf(lower) ?? -1;
  if (named >= 0) return named + f.nameBase!;
  if (!/^\d+$/.test(text))
    throw new CronError(`${f.name}: "${text}" is not a number${f.names ? ' or a name' : ''}`);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new CronError(`${f.name}: ${n} is outside ${f.min}-${f.max}`);
  return n;
}

function parseField(text: string, f: FieldSpec): { set: Set<number>; star: boolean } {
  const set = new Set<number>();
  let star = false;
  for (const part of text.split(',')) {
    if (part === '') throw new CronError(`${f.name}: empty list item`);
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined) throw new CronError(`${f.name}: "${part}" has more than one step`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1)
        throw new CronError(`${f.name}: step "${stepText}" must be a positive number`);
      step = Number(stepText);
    }
    let lo: number, hi: number;
    if (range === '*' || range === '?') {
      lo = f.min;
      hi = f.max === 7 ? 6 : f.max;
      star = true;
    } else {
      const bounds = range!.split('-');
      if (bounds.length > 2) throw new CronError(`${f.name}: bad range "${range}"`);
      lo = value(bounds[0]!, f);
      // `5/15` means from 5 to the end, like robfig/cron.
      hi = bounds.length === 2 ? value(bounds[1]!, f) : stepText !== undefined ? f.max : lo;
      if (hi < lo) throw new CronError(`${f.name}: range ${range} runs backwards`);
    }
    for (let n = lo; n <= hi; n += step) set.add(f.max === 7 && n === 7 ? 0 : n);
  }
  return { set, star };
}

export function parseCron(expression: string): CronSchedule {
  let text = expression.trim();
  let timeZone: string | undefined;
  const tz = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(text);
  if (tz) {
    timeZone = tz[1]!;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone });
    } catch {
      throw new CronError(`unknown time zone "${timeZone}"`);
    }
    text = tz[2]!.trim();
  }
  if (text.startsWith('@')) {
    const expanded = SHORTHANDS[text.toLowerCase()];
    if (!expanded) throw new CronError(`unknown shorthand "${text}"`);
    text = expanded;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5)
    throw new CronError(
      `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`,
    );
  const [mi, h, d, mo, w] = parts.map((p, i) => parseField(p, FIELDS[i]!));
  return {
    minutes: mi!.set,
    hours: h!.set,
    days: d!.set,
    months: mo!.set,
    weekdays: w!.set,
    daysStar: d!.star,
    weekdaysStar: w!.star,
    ...(timeZone ? { timeZone } : {}),
  };
}
