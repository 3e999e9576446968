/**
 * The result table of a chaos run: one row per fault, printed at the end of the suite and written
 * to a file (the path is printed) together with the history as JSON lines.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Row {
  fault: string;
  acked: number;
  lost: number;
  doubled: number;
  reconnectP50Ms: number;
  reconnectMaxMs: number;
  /** Longest time between two ticks of the test check; undefined when not measured. */
  scheduleGapMs?: number;
  spurious: number;
  /** undefined when the fault has no agent that died. */
  missed?: number;
  /** Anything else the fault measures (fencing, config stall, rate). */
  notes: string;
  /** Why the row fails, empty when it passes. */
  failures: string[];
}

const s = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)}s`);

export function render(rows: Row[]): string {
  const head = [
    'fault',
    'acked',
    'lost',
    'doubled',
    'reconnect p50/max',
    'sched gap',
    'spurious',
    'missed',
    'ok',
    'notes',
  ];
  const body = rows.map((r) => [
    r.fault,
    String(r.acked),
    String(r.lost),
    String(r.doubled),
    `${s(r.reconnectP50Ms)}/${s(r.reconnectMaxMs)}`,
    s(r.scheduleGapMs),
    String(r.spurious),
    r.missed === undefined ? '-' : String(r.missed),
    r.failures.length ? 'FAIL' : 'ok',
    r.notes,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** Writes the table to `<dir>/chaos-table.md` and returns the path. */
export function writeTable(dir: string, rows: Row[], preamble: string): string {
  const file = path.join(dir, 'chaos-table.md');
  const failures = rows.flatMap((r) => r.failures.map((f) => `- ${r.fault}: ${f}`));
  fs.writeFileSync(
    file,
    `${preamble}\n\n${render(rows)}\n${failures.length ? `\n${failures.join('\n')}\n` : ''}`,
  );
  return file;
}
