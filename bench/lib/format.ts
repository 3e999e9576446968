/** Number formatting and plain-text tables for benchmark output. */

/** 14230 -> "14,230". */
export const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');

/** Fixed decimals, '-' for NaN. */
export const fix = (v: number, digits = 1): string => (Number.isFinite(v) ? v.toFixed(digits) : '-');

/** Milliseconds with a precision that fits the size: 0.42 ms, 12.1 ms, 310 ms. */
export const ms = (v: number): string => {
  if (!Number.isFinite(v)) return '-';
  if (v < 1) return `${v.toFixed(2)} ms`;
  if (v < 100) return `${v.toFixed(1)} ms`;
  return `${Math.round(v)} ms`;
};

export const pct = (v: number): string =>
  Number.isFinite(v) ? `${v < 10 ? v.toFixed(1) : Math.round(v)}%` : '-';

export const mb = (v: number): string => (Number.isFinite(v) ? `${Math.round(v)} MB` : '-');

export const secs = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(1)} s` : '-');

/** A table with a header row, columns padded to their widest cell; numbers right-aligned. */
export function table(header: string[], rows: string[][]): string {
  // Columns with no header and no content are left out.
  const keep = header.map((h, i) => h !== '' || rows.some((r) => (r[i] ?? '') !== ''));
  header = header.filter((_, i) => keep[i]);
  rows = rows.map((r) => r.filter((_, i) => keep[i]));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const right = header.map(
    (_, i) =>
      rows.length > 0 &&
      rows.every((r) => /^[-\d.,]+( ?[a-zA-Z%/]+)?$/.test(r[i] ?? '-') || (r[i] ?? '') === '-'),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    widths
      .map((w) => '-'.repeat(w))
      .join('  ')
      .trimEnd(),
    ...rows.map(line),
  ].join('\n');
}

/** A titled block: `== title ==` followed by its lines. */
export function block(title: string, lines: string[]): string {
  return [`\n== ${title} ==`, ...lines].join('\n');
}

/** Progress notes go to stderr so stdout holds only the figures. */
export function note(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}
