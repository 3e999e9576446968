import type { CronSchedule } from '../proto/cron.ts';

// When a parsed cron schedule (proto/cron.ts) fires next, in its time zone.

/** Wall-clock fields of an instant in a zone, as a UTC epoch (the "naive" local time). */
function wallOf(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return (
    Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) +
    (((ms % 1000) + 1000) % 1000)
  );
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
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!dayMatches(s, t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!s.hours.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (!s.minutes.has(t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
      continue;
    }
    wall = t.getTime();
    const at = zone ? instantOf(wall, zone) : wall;
    if (at > afterMs) return at;
    t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
  }
  return undefined;
}
