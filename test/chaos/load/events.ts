/**
 * How the load names its events so that the checker can tell each one apart in the store.
 *
 * Each event carries a token, unique per entity, as its `check.executed`: the store merges every
 * applied result into its check's `history` as `{status, executed}`, so the history says which
 * events were applied and how often (status is always 0, so `occurrences` counts them too).
 *
 * Which check an event goes to:
 * - round robin over CHECKS checks, so consecutive events of one client touch different keys. The
 *   store recognises a resent message among the last 8 that wrote the key it touches
 *   (docs/architecture.md, "Atomic turns", limits), and a client keeps at most that many events of
 *   one check unacknowledged (RECOGNISED_WRITES_PER_CHECK, as the agent's relay does); spreading the
 *   events over several checks, as a real agent's come from several checks, keeps that limit from
 *   holding up the client's window;
 * - a new generation of checks every CHECKS × PER_CHECK events, so no check gets more than
 *   PER_CHECK: its history (21 entries) then holds every result it ever got, even if some were
 *   applied twice (otherwise a double would push the oldest out and look like a loss), and the first
 *   event of each new check takes the turn of two writes (record and event), the one whose atomicity
 *   issue 14 is about.
 */
export const NS = 'default';
const CHECKS = 8;
const PER_CHECK = 10;
/** Tokens start here (a 2001 timestamp), so `executed` stays a plausible, distinct number. */
const TOKEN_BASE = 1_000_000_000;

/** The check and token of a client's `seq`th event (from 1). */
export function eventSlot(prefix: string, seq: number): { check: string; token: number } {
  const i = seq - 1;
  const generation = Math.floor(i / (CHECKS * PER_CHECK));
  return { check: `${prefix}${generation}-c${i % CHECKS}`, token: TOKEN_BASE + seq };
}

/** The check part of an event body, as a client sends it. */
export function checkBody(check: string, token: number) {
  return {
    metadata: { name: check, namespace: NS },
    status: 0,
    output: `token ${token}`,
    issued: token,
    executed: token,
    interval: 60,
  };
}
