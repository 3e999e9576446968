// Columns of tabular output: a header and how an item shows in it, with the small helpers the
// resource table builds its columns from.

type Item = Record<string, unknown>;

export interface Column<T = Item> {
  header: string;
  value(item: T): string;
}

/** The value at a dotted path (`check.metadata.name`), undefined when any step is missing. */
export function at(item: unknown, path: string): unknown {
  let cur: unknown = item;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** A value as one cell: lists joined by commas, objects as JSON, nothing as empty. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(cell).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export const field = (header: string, path: string): Column => ({
  header,
  value: (item) => cell(at(item, path)),
});

/** Unix seconds as UTC time (`2024-05-01 12:00:00 +0000`); 0 or nothing is empty. */
export function unixTime(value: unknown): string {
  if (typeof value !== 'number' || value <= 0) return '';
  return `${new Date(value * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} +0000`;
}

export const time = (header: string, path: string): Column => ({
  header,
  value: (item) => unixTime(at(item, path)),
});

/** true/false, or empty when the field is absent. */
export const flag = (header: string, path: string): Column => ({
  header,
  value: (item) => {
    const v = at(item, path);
    return typeof v === 'boolean' ? String(v) : '';
  },
});

/** Labels as `key=value` pairs, sorted by key. */
export function labelsCell(item: unknown): string {
  const labels = at(item, 'metadata.labels');
  if (!labels || typeof labels !== 'object') return '';
  return Object.entries(labels as Record<string, unknown>)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${cell(v)}`)
    .join(',');
}
