/**
 * Subdue windows (`subdues`, core/v2 TimeWindowRepeated): `begin` and `end` are RFC 3339 times;
 * without `repeat` the window happens once, otherwise it repeats `daily`, `weekly`, `monthly`,
 * `annually`, on `weekdays`, `weekends` or on named days (`monday`...). Repetitions keep the wall
 * clock of `begin` in its own UTC offset. Windows that cannot be read are ignored (the API checks
 * only their shape), so a typo never stops a check from running.
 */

interface SubdueWindow {
  begin: string;
  end: string;
  repeat?: string[] | null;
}

const DAY_MS = 86_400_000;
const DAY_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

function offsetOf(text: string): number {
  const m = /(Z|([+-])(\d\d):?(\d\d))$/i.exec(text.trim());
  if (!m || m[1]!.toUpperCase() === 'Z') return 0;
  return (m[2] === '-' ? -1 : 1) * (Number(m[3]) * 60 + Number(m[4])) * 60_000;
}

/** Days (in the window's own offset) on which a repetition may start; undefined when any day may. */
function startDays(repeat: string[]): Set<number> | undefined {
  const days = new Set<number>();
  let any = false;
  for (const r of repeat.map((x) => x.toLowerCase())) {
    if (r === 'daily') any = true;
    else if (r === 'weekdays') [1, 2, 3, 4, 5].forEach((d) => days.add(d));
    else if (r === 'weekends') [0, 6].forEach((d) => days.add(d));
    else if (DAY_NAMES.includes(r)) days.add(DAY_NAMES.indexOf(r));
  }
  return any ? undefined : days;
}

function inWindow(w: SubdueWindow, now: number): boolean {
  const begin = Date.parse(w.begin),
    end = Date.parse(w.end);
  if (!Number.isFinite(begin) || !Number.isFinite(end) || end <= begin) return false;
  const length = end - begin;
  const repeat = w.repeat ?? [];
  if (repeat.length === 0) return now >= begin && now < end;
  if (now < begin) return false;
  const offset = offsetOf(w.begin);
  const local = (ms: number) => new Date(ms + offset);
  const lower = repeat.map((r) => r.toLowerCase());
  // Each repetition starts on a day; look at the starts that could still cover `now`.
  const spanDays = Math.ceil(length / DAY_MS);
  const beginLocal = local(begin);
  for (let back = 0; back <= spanDays; back++) {
    const dayStart = Math.floor((now + offset) / DAY_MS - back) * DAY_MS;
    const start = dayStart + ((begin + offset) % DAY_MS) - offset;
    if (start < begin || now < start || now >= start + length) continue;
    const d = local(start);
    const matches =
      (lower.includes('weekly') && d.getUTCDay() === beginLocal.getUTCDay()) ||
      (lower.includes('monthly') && d.getUTCDate() === beginLocal.getUTCDate()) ||
      (lower.includes('annually') &&
        d.getUTCDate() === beginLocal.getUTCDate() &&
        d.getUTCMonth() === beginLocal.getUTCMonth()) ||
      (() => {
        const days = startDays(lower);
        return days === undefined ? true : days.has(d.getUTCDay());
      })();
    if (matches) return true;
  }
  return false;
}

/** True when `now` falls inside one of the check's subdue windows: its requests are not published. */
export function subdued(windows: SubdueWindow[] | null | undefined, now: number): boolean {
  return (windows ?? []).some((w) => inWindow(w, now));
}
