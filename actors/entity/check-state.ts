import type { Check, HistoryEntry } from '../../proto/schemas/event.ts';

// How a new check result folds into the previous one: the history window, occurrences and their
// watermark, the state-change score and the resulting state. Formulas follow
// docs/compatibility.md#check-state-formulas (Nagios-style weighted state change over 21 results).

export const HISTORY_LENGTH = 21;

/** Weighted share of status changes across a full history window, in percent (0 until full). */
export function totalStateChange(history: readonly HistoryEntry[]): number {
  if (history.length < HISTORY_LENGTH) return 0;
  // The reference computes in 32-bit floats and truncates; fround keeps our results identical.
  let changes = Math.fround(0);
  let weight = Math.fround(0.8);
  for (let i = 1; i < history.length; i++) {
    if (history[i]!.status !== history[i - 1]!.status) changes = Math.fround(changes + weight);
    weight = Math.fround(weight + Math.fround(0.02));
  }
  return Math.trunc(Math.fround(Math.fround(changes / 20) * 100));
}

/**
 * The legacy generation's score (docs/compatibility.md#legacy-client), for legacy results: doubles, and
 * the first entry compared with itself, so entry i weighs 0.8 + 0.02 * i (one step more than ours).
 */
export function legacyTotalStateChange(history: readonly HistoryEntry[]): number {
  if (history.length < HISTORY_LENGTH) return 0;
  let changes = 0;
  let weight = 0.8;
  let prev = history[0]!.status;
  for (const { status } of history) {
    if (status !== prev) changes += weight;
    weight += 0.02;
    prev = status;
  }
  return Math.trunc((changes / 20) * 100);
}

/**
 * Whether the check is flapping: it starts flapping at `high` and keeps flapping until the score
 * drops to `low` or below (hysteresis). Both thresholds must be set (non-zero; for a legacy result,
 * integers, 0 included, as the legacy generation checked them).
 */
export function isFlapping(
  score: number,
  wasFlapping: boolean,
  low?: number,
  high?: number,
  legacy = false,
): boolean {
  if (legacy ? !Number.isInteger(low) || !Number.isInteger(high) : !low || !high) return false;
  return wasFlapping ? score > low! : score >= high!;
}

/** A result of 0 right after a non-zero one (docs/compatibility.md#check-state-formulas), read from the merged history. */
export function isResolution(check: Check | undefined): boolean {
  const history = check?.history ?? [];
  const previous = history.length >= 2 ? history[history.length - 2]!.status : 0;
  return !!check && (check.status ?? 0) === 0 && previous !== 0;
}

/**
 * Returns `current` with history, occurrences, watermark, score, state and last_ok filled in; a legacy
 * result (a legacy client's, or one through the legacy API) is scored with the legacy formula.
 */
export function mergeCheck(previous: Check | undefined, current: Check, legacy = false): Check {
  const status = current.status ?? 0;
  const executed = current.executed ?? Math.floor(Date.now() / 1000);
  const history = [...(previous?.history ?? []), { status, executed }].slice(-HISTORY_LENGTH);
  const prevStatus = history.length > 1 ? history[history.length - 2]!.status : undefined;

  let occurrences = prevStatus !== undefined && prevStatus === status ? (previous?.occurrences ?? 0) + 1 : 1;
  if (occurrences < 1) occurrences = 1;
  let watermark = previous?.occurrences_watermark ?? 0;
  if (prevStatus === 0 && status !== 0) watermark = 1;
  else if (occurrences > watermark) watermark = occurrences;

  const score = legacy ? legacyTotalStateChange(history) : totalStateChange(history);
  // A forced resolution (the legacy API's resolve, docs/compatibility.md#legacy-api) ends flapping too.
  const forced = (current as { force_resolve?: unknown }).force_resolve === true && status === 0;
  const flapping =
    !forced &&
    isFlapping(
      score,
      previous?.state === 'flapping',
      current.low_flap_threshold,
      current.high_flap_threshold,
      legacy,
    );
  let lastOk = previous?.last_ok ?? 0;
  let state: string;
  if (flapping) state = 'flapping';
  else if (status === 0) {
    state = 'passing';
    lastOk = executed;
  } else state = 'failing';

  return {
    ...current,
    status,
    executed,
    history,
    occurrences,
    occurrences_watermark: watermark,
    total_state_change: score,
    state,
    last_ok: lastOk,
  };
}
