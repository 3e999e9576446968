/**
 * Standard 5-field cron (minute hour day-of-month month day-of-week) with `*`, lists, ranges,
 * steps, month and day names, `?` as `*`, the @yearly/@monthly/@weekly/@daily/@midnight/@hourly
 * shorthands, and an optional `CRON_TZ=<zone>` or `TZ=<zone>` prefix. Without a prefix times are
 * UTC (the backend's nodes may run in different local zones; UTC keeps them agreeing).
 * Day-of-month and day-of-week combine as in Vixie cron and robfig/cron: when both are restricted,
 * a day matching either one matches.
 */

export class CronError extends Error { constructor(message: string) { super(message); this.name = 'CronError'; } }

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
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

interface FieldSpec { name: string; min: number; max: number; names?: string[]; nameBase?: number }
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
  if (!/^\d+$/.test(text)) throw new CronError(`${f.name}: "${text}" is not a number${f.names ? ' or a name' : ''}`);
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
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) throw new CronError(`${f.name}: step "${stepText}" must be a positive number`);
      step = Number(stepText);
    }
    let lo: number, hi: number;
    if (range === '*' || range === '?') { lo = f.min; hi = f.max === 7 ? 6 : f.max; star = true; }
    else {
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
    try { new Intl.DateTimeFormat('en-US', { timeZone }); } catch { throw new CronError(`unknown time zone "${timeZone}"`); }
    text = tz[2]!.trim();
  }
  if (text.startsWith('@')) {
    const expanded = SHORTHANDS[text.toLowerCase()];
    if (!expanded) throw new CronError(`unknown shorthand "${text}"`);
    text = expanded;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5) throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const [mi, h, d, mo, w] = parts.map((p, i) => parseField(p, FIELDS[i]!));
  return {
    minutes: mi!.set, hours: h!.set, days: d!.set, months: mo!.set, weekdays: w!.set,
    daysStar: d!.star, weekdaysStar: w!.star, ...(timeZone ? { timeZone } : {}),
  };
}

/** Wall-clock fields of an instant in a zone, as a UTC epoch (the "naive" local time). */
function wallOf(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) + (ms % 1000 + 1000) % 1000;
}

/** An instant whose wall clock in the zone reads `wall` (the later one across a DST gap). */
function instantOf(wall: number, timeZone: string): number {
  let guess = wall - (wallOf(wall, timeZone) - wall);
  guess = wall - (wallOf(guess, timeZone) - guess);
  return guess;
}

function dayMatches(s: CronSchedule, d: Date): boolean {
  const dom = s.days.has(d.getUTCDate());
  const dow = s.weekdays.has(d.getUTCDay());
  return s.daysStar || s.weekdaysStar ? dom && dow : dom || dow;
}

/** The first fire time (epoch ms, whole minute) strictly after `afterMs`; undefined if none within 5 years. */
export function nextCronFire(s: CronSchedule, afterMs: number): number | undefined {
  const zone = s.timeZone;
  // Work on the wall clock (UTC fields of a naive time), then map back to an instant.
  let wall = zone ? wallOf(afterMs, zone) : afterMs;
  const t = new Date(Math.floor(wall / 60_000) * 60_000 + 60_000);
  const limit = t.getTime() + 5 * 366 * 86_400_000;
  while (t.getTime() < limit) {
    if (!s.months.has(t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1); t.setUTCHours(0, 0, 0, 0); continue;
    }
    if (!dayMatches(s, t)) { t.setUTCDate(t.getUTCDate() + 1); t.setUTCHours(0, 0, 0, 0); continue; }
    if (!s.hours.has(t.getUTCHours())) { t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0); continue; }
    if (!s.minutes.has(t.getUTCMinutes())) { t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0); continue; }
    wall = t.getTime();
    const at = zone ? instantOf(wall, zone) : wall;
    if (at > afterMs) return at;
    t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
  }
  return undefined;
}
