/**
 * Figures of one fault window taken from the history: how long agents were away, how the check
 * schedule kept its beat, how long configuration writes stalled.
 */
import type { History } from './history.ts';

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

interface ReconnectFigures {
  count: number;
  p50Ms: number;
  maxMs: number;
  /** The slowest return told attempt by attempt, so a failed bound says where the time went. */
  slowest?: string;
  /** Agents (not closed for good) still away now. */
  stillAway: number;
}

/** Closes in [from, to) and how long each agent took to be back (still away: counted up to now). */
export function reconnects(h: History, from: number, to: number, dead: Set<string>): ReconnectFigures {
  const now = Date.now();
  const rs = h.reconnects.filter((r) => r.closedAt >= from && r.closedAt < to && !dead.has(r.agent));
  const ms = rs.map((r) => (r.openedAt ?? now) - r.closedAt);
  const worst = rs[ms.indexOf(Math.max(...ms))];
  return {
    count: rs.length,
    p50Ms: quantile(ms, 0.5),
    maxMs: ms.length ? Math.max(...ms) : 0,
    ...(worst ? { slowest: story(h, worst) } : {}),
    stillAway: rs.filter((r) => r.openedAt === undefined).length,
  };
}

interface ScheduleFigures {
  /** Distinct ticks (issued values) seen in the window. */
  ticks: number;
  /** Longest time between the first arrivals of consecutive ticks. */
  maxGapMs: number;
  /** A tick that reached one agent twice: published twice. */
  doubled: string[];
}

/** First arrival of each tick of `check`, sorted by time. */
function arrivals(h: History, check: string): Array<{ issued: number; at: number }> {
  const first = new Map<number, number>();
  for (const t of h.ticks) {
    if (t.check !== check) continue;
    if (!first.has(t.issued) || first.get(t.issued)! > t.at) first.set(t.issued, t.at);
  }
  return [...first].map(([issued, at]) => ({ issued, at })).sort((a, b) => a.at - b.at);
}

export function schedule(h: History, check: string, from: number, to: number): ScheduleFigures {
  const all = arrivals(h, check);
  // The last tick before the window starts the first gap: a fault at the window's start counts.
  const inWindow = all.filter((a) => a.at >= from && a.at < to);
  const before = all.filter((a) => a.at < from).at(-1);
  const seq = before ? [before, ...inWindow] : inWindow;
  let maxGapMs = 0;
  for (let i = 1; i < seq.length; i++) maxGapMs = Math.max(maxGapMs, seq[i]!.at - seq[i - 1]!.at);
  const perAgent = new Map<string, number>();
  for (const t of h.ticks) {
    if (t.check !== check || t.at < from || t.at >= to) continue;
    const k = `${t.agent}@${t.issued}`;
    perAgent.set(k, (perAgent.get(k) ?? 0) + 1);
  }
  return {
    ticks: inWindow.length,
    maxGapMs,
    doubled: [...perAgent].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`),
  };
}

/**
 * The longest silence of the schedule in [from, to): the pair of consecutive first arrivals furthest
 * apart (the last tick before `from` opens the first pair). Undefined until a tick came after it.
 */
export function longestGap(
  h: History,
  check: string,
  from: number,
  to: number,
): { gapMs: number; resumedAt: number } | undefined {
  const all = arrivals(h, check);
  const before = all.filter((a) => a.at < from).at(-1);
  const seq = [...(before ? [before] : []), ...all.filter((a) => a.at >= from && a.at < to)];
  let best: { gapMs: number; resumedAt: number } | undefined;
  for (let i = 1; i < seq.length; i++) {
    const gapMs = seq[i]!.at - seq[i - 1]!.at;
    if (!best || gapMs > best.gapMs) best = { gapMs, resumedAt: seq[i]!.at };
  }
  return best;
}

/** Longest stretch in [from, to) without a successful configuration write. */
export function configStall(h: History, from: number, to: number): { maxGapMs: number; failed: number } {
  const oks = h.configWrites.filter((c) => c.ok && c.at >= from && c.at < to).map((c) => c.at);
  const failed = h.configWrites.filter((c) => !c.ok && c.at >= from && c.at < to).length;
  const points = [from, ...oks, Math.min(to, Date.now())];
  let maxGapMs = 0;
  for (let i = 1; i < points.length; i++) maxGapMs = Math.max(maxGapMs, points[i]! - points[i - 1]!);
  return { maxGapMs, failed };
}

/** One agent's way back: the close, each failed attempt (its length, reason, answering node), the reopen. */
function story(h: History, r: History['reconnects'][number]): string {
  const t = (ms: number) => `+${((ms - r.closedAt) / 1000).toFixed(1)}s`;
  const tries = h.connectFailures
    .filter((f) => f.agent === r.agent && f.at >= r.closedAt && f.at <= (r.openedAt ?? Infinity))
    .map(
      (f) =>
        `${t(f.startedAt)} try ${((f.at - f.startedAt) / 1000).toFixed(1)}s: ${f.reason}${f.node ? ` (${f.node})` : ''}`,
    );
  return [
    `${r.agent} left ${r.node ?? '?'} (close ${r.code})`,
    ...tries,
    r.openedAt === undefined ? 'still away' : `${t(r.openedAt)} open`,
  ].join('; ');
}
