import Table from 'cli-table3';

// Tables of tabular output: a header, a rule under it, one line per row, no other borders and no
// colours. Fitted to `width` (a terminal's columns) by narrowing the widest columns, whose cells
// are then cut with an ellipsis; without a width (not a terminal) every cell is shown whole.

const CHARS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '─',
  'mid-mid': ' ',
  right: '',
  'right-mid': '',
  middle: ' ',
};

/** Padding of a cell (one space each side) and the space between two columns. */
const PADDING = 2;
const GAP = 1;
/** No column is narrowed below this (with its padding). */
const MIN_COLUMN = 7;

const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, ' ');
const widthOf = (s: string) => [...s].length;

/**
 * Column widths that fit `width`: the widest columns are narrowed to one common cap, the smallest
 * that leaves the rest whole; never below MIN_COLUMN (so a very narrow terminal may still wrap).
 */
export function fitWidths(natural: number[], width: number): number[] {
  const total = (cap: number) =>
    natural.reduce((sum, w) => sum + Math.min(w, cap), 0) + GAP * (natural.length - 1);
  if (total(Infinity) <= width) return natural;
  let lo = MIN_COLUMN;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (total(mid) <= width) lo = mid;
    else hi = mid - 1;
  }
  return natural.map((w) => Math.min(w, lo));
}

export function renderTable(headers: string[], rows: string[][], width?: number): string {
  const cells = rows.map((r) => r.map(oneLine));
  const natural = headers.map(
    (h, i) => Math.max(widthOf(h), ...cells.map((r) => widthOf(r[i] ?? ''))) + PADDING,
  );
  const t = new Table({
    head: headers,
    chars: CHARS,
    style: { head: [], border: [], compact: true, 'padding-left': 1, 'padding-right': 1 },
    colWidths: width !== undefined && width > 0 ? fitWidths(natural, width) : natural,
    wordWrap: false,
    truncate: '…',
  });
  t.push(...cells);
  return `${t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')}\n`;
}
