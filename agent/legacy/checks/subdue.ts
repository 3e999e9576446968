import { parseTimeOfDay, WEEKDAYS } from '../../../proto/time-of-day.ts';

// A standalone check's `subdue` (docs/compatibility.md#legacy-client): `{days: {all|<weekday>: [{begin, end}]}}`,
// times of day such as "5:00 PM" on the client's local clock, as the legacy client read them. Inside a
// window the fire is skipped. Both ends are inclusive; an end before its begin crosses midnight, and then,
// as in the legacy client, the end second itself is outside.

const DAY = 24 * 3600;

function inWindow(w: unknown, t: number): boolean {
  if (!w || typeof w !== 'object') return false;
  const { begin, end } = w as { begin?: unknown; end?: unknown };
  if (typeof begin !== 'string' || typeof end !== 'string') return false;
  const b = parseTimeOfDay(begin);
  const e = parseTimeOfDay(end);
  if (b === undefined || e === undefined) return false;
  let from = b * 60;
  let to = e * 60;
  if (to < from) {
    if (t < to) from = 0;
    else to = DAY - 1;
  }
  return t >= from && t <= to;
}

/** Whether the check is subdued at `now` (local time of this host). */
export function legacySubdued(subdue: unknown, now: Date): boolean {
  if (!subdue || typeof subdue !== 'object') return false;
  const days = (subdue as { days?: unknown }).days;
  if (!days || typeof days !== 'object') return false;
  const t = now.getHours() * 3600 + now.getMinutes() * 60 + now.getSeconds();
  const today = WEEKDAYS[now.getDay()]!;
  const lists = [(days as Record<string, unknown>).all, (days as Record<string, unknown>)[today]];
  return lists.some((l) => Array.isArray(l) && l.some((w) => inWindow(w, t)));
}
