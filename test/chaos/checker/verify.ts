/**
 * The checker of events: the history of operations against what the store holds.
 *
 * For each operation, how many times its token appears in its check's history (each application of
 * an event adds one entry with its `executed`, which is the token):
 * - acknowledged (`ok`) and 0 → lost;
 * - any outcome and more than 1 → applied twice (a retry or a resend not recognised, or a fenced
 *   node's write that got through);
 * - refused for good (`fail`) and 1 → a refusal that was applied anyway.
 * A stored check whose `occurrences` differs from its history length (status is always 0 and no check
 * gets more results than the history holds) was applied more often than its history shows. A token
 * no operation sent is a phantom write.
 */
import { sleep } from '../../harness/index.ts';
import type { EventOp } from './history.ts';
import { eventKey, getEvent, listEvents, type StoredEvent } from './read-back.ts';

interface Verdict {
  acked: EventOp[];
  lost: EventOp[];
  doubled: Array<{ op: EventOp; times: number }>;
  /** Refused for good, yet stored. */
  refusedButStored: EventOp[];
  /** Checks whose occurrences do not match their history. */
  overApplied: string[];
  /** History entries no operation accounts for. */
  phantoms: string[];
  /** Acknowledged events whose last read failed (neither proven stored nor proven lost). */
  unreadable: Array<{ op: EventOp; error: string }>;
}

const count = (xs: number[], x: number) => xs.reduce((n, y) => n + (y === x ? 1 : 0), 0);

async function listWithRetry(apiUrl: string): Promise<Map<string, StoredEvent>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await listEvents(apiUrl);
    } catch (err) {
      if (attempt >= 5) throw err;
      await sleep(2000);
    }
  }
}

/**
 * Reads the store and judges `ops`. Acknowledged events the list does not show are read one by one
 * from KV until they appear or `timeoutMs` passes (the list trails the writes).
 */
export async function verify(apiUrl: string, ops: EventOp[], timeoutMs = 60_000): Promise<Verdict> {
  const deadline = Date.now() + timeoutMs;
  const listed = await listWithRetry(apiUrl);
  const storedOf = new Map<string, StoredEvent | undefined>();
  const keyOf = (op: EventOp) => eventKey(op.entity, op.check);
  for (const op of ops) storedOf.set(keyOf(op), listed.get(keyOf(op)));

  const v: Verdict = {
    acked: ops.filter((o) => o.outcome === 'ok'),
    lost: [],
    doubled: [],
    refusedButStored: [],
    overApplied: [],
    phantoms: [],
    unreadable: [],
  };
  const times = (op: EventOp) => count(storedOf.get(keyOf(op))?.executed ?? [], op.token);

  // Acknowledged but not (yet) visible: read each such check from KV until it shows or time is up.
  let missing = v.acked.filter((op) => times(op) === 0);
  const errors = new Map<EventOp, string>();
  while (missing.length > 0) {
    errors.clear();
    for (const key of new Set(missing.map(keyOf))) {
      const op = missing.find((o) => keyOf(o) === key)!;
      try {
        storedOf.set(key, await getEvent(apiUrl, op.entity, op.check));
      } catch (err) {
        for (const o of missing) if (keyOf(o) === key) errors.set(o, (err as Error).message);
      }
    }
    missing = missing.filter((op) => times(op) === 0);
    if (missing.length === 0 || Date.now() > deadline) break;
    console.log(`[chaos] ${missing.length} acknowledged events not readable yet`);
    await sleep(2000);
  }
  for (const op of missing) {
    const error = errors.get(op);
    if (error) v.unreadable.push({ op, error });
    else v.lost.push(op);
  }

  const tokensByKey = new Map<string, Set<number>>();
  for (const op of ops) {
    const n = times(op);
    if (n > 1) v.doubled.push({ op, times: n });
    if (op.outcome === 'fail' && n > 0) v.refusedButStored.push(op);
    const set = tokensByKey.get(keyOf(op)) ?? new Set();
    set.add(op.token);
    tokensByKey.set(keyOf(op), set);
  }
  for (const [key, tokens] of tokensByKey) {
    const s = storedOf.get(key);
    if (!s) continue;
    if (s.occurrences !== s.executed.length)
      v.overApplied.push(`${key} (occurrences ${s.occurrences}, history ${s.executed.length})`);
    for (const x of s.executed) if (!tokens.has(x)) v.phantoms.push(`${key}: ${x}`);
  }
  return v;
}
