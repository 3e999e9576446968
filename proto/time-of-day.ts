// Times of day of filter time windows: Sensu writes them as "5:00 PM"; "17:00" is accepted too.

/** Minutes after midnight of "5:00 PM", "5:00pm", "17:00" or "08:00"; undefined when not a time. */
export function parseTimeOfDay(s: string): number | undefined {
  const m = /^\s*(\d{1,2}):(\d{2})\s*([AaPp][Mm])?\s*$/.exec(s);
  if (!m) return undefined;
  let h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59) return undefined;
  if (m[3]) {
    if (h < 1 || h > 12) return undefined;
    h = (h % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  } else if (h > 23) return undefined;
  return h * 60 + min;
}

export const WEEKDAYS = [
  'sunday',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
] as const;
