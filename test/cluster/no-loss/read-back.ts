/**
 * The read-back of the no-loss suite (test/cluster/no-loss.test.ts): what is stored for each
 * acknowledged event (its history entries and occurrences), read from the live backends until
 * every one is readable or the time is up; and the messages that explain a failure.
 */
import { sleep, type Backend, type Proc } from '../../harness/index.ts';
import { NS, type Sent } from './load.ts';

/** After the load stops: bound on the wait for every acknowledged event to be readable. */
export const READ_BACK_TIMEOUT_MS = 90_000;

interface Stored {
  history: number;
  occurrences: number;
}
const keyOf = (entity: string, check: string) => `${entity}/${check}`;

/** Every event of the namespace, by `entity/check`, one list call per page. */
async function listEvents(b: Backend): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  let cont: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const q: string = `limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await b.get(`/api/core/v2/namespaces/${NS}/events?${q}`, {
      signal: AbortSignal.timeout(30_000),
    });
    if (r.status !== 200 || !Array.isArray(r.body))
      throw new Error(`list events: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    for (const e of r.body) {
      out.set(keyOf(e.entity?.metadata?.name, e.check?.metadata?.name), {
        history: e.check?.history?.length ?? 0,
        occurrences: e.check?.occurrences ?? 0,
      });
    }
    cont = r.headers.get('monitor-continue');
    if (!cont) return out;
  }
  throw new Error('list events: more than 1000 pages');
}

/** One event straight from KV (the list comes from a read model that may trail it); undefined = 404. */
async function getEvent(b: Backend, entity: string, check: string): Promise<Stored | undefined> {
  const r = await b.get(`/api/core/v2/namespaces/${NS}/events/${entity}/${check}`);
  if (r.status === 404) return undefined;
  if (r.status !== 200)
    throw new Error(`GET ${entity}/${check}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return { history: r.body.check?.history?.length ?? 0, occurrences: r.body.check?.occurrences ?? 0 };
}

export interface ReadBack {
  /** What is stored for each acknowledged event; absent = not stored (404 and not listed). */
  stored: Map<Sent, Stored>;
  /** Events whose last read failed (not a 404): neither proven lost nor proven stored. */
  unreadable: Map<Sent, string>;
}

/**
 * Polls until every acknowledged event is readable or READ_BACK_TIMEOUT_MS passes. Each pass reads
 * everything afresh, so the answer is the last state (a late resend that doubles an event counts).
 */
export async function readBack(acked: Sent[], backends: Map<string, Backend>): Promise<ReadBack> {
  const deadline = Date.now() + READ_BACK_TIMEOUT_MS;
  for (let pass = 0; ; pass++) {
    const out: ReadBack = { stored: new Map(), unreadable: new Map() };
    // Each pass asks another backend: one that cannot read must not decide the outcome.
    const live = [...backends.values()];
    const b = live[pass % live.length]!;
    const listed = await listEvents(b).catch(() => new Map<string, Stored>());
    for (const s of acked) {
      const fromList = listed.get(keyOf(s.entity, s.check));
      if (fromList) {
        out.stored.set(s, fromList);
        continue;
      }
      try {
        const one = await getEvent(b, s.entity, s.check);
        if (one) out.stored.set(s, one);
      } catch (err) {
        out.unreadable.set(s, (err as Error).message);
      }
    }
    const missing = acked.length - out.stored.size;
    if (missing === 0 || Date.now() > deadline) return out;
    console.log(
      `[no-loss] ${missing} acknowledged events not readable yet (${out.unreadable.size} reads failed)`,
    );
    await sleep(3000);
  }
}

/** "round: ids" lines, one per round, for assertion messages. */
export function byRound(items: Array<{ s: Sent; note?: string }>): string {
  const groups = new Map<string, string[]>();
  for (const { s, note } of items) {
    const g = groups.get(s.round) ?? [];
    g.push(`${s.entity}/${s.check}${note ? ` ${note}` : ''}`);
    groups.set(s.round, g);
  }
  return [...groups]
    .map(
      ([r, ids]) =>
        `\n  [${r}] ${ids.length}: ${ids.slice(0, 40).join(', ')}${ids.length > 40 ? ', ...' : ''}`,
    )
    .join('');
}

/** What these backend processes logged about failed state writes: context for a failure. */
export function backendLogSummary(backendProcs: Proc[]): string {
  let failedWrites = 0,
    jsUnavailable = 0,
    conflicts = 0;
  for (const p of backendProcs) {
    for (const l of p.jsonLines()) {
      if (l.msg !== 'state write failed; reloading the actor') continue;
      failedWrites++;
      if (/JetStream is not available for bucket monitor_events/.test(String(l.error))) jsUnavailable++;
      if (/revision conflict/.test(String(l.error))) conflicts++;
    }
  }
  return `backends logged ${failedWrites} failed state writes (${jsUnavailable} "JetStream is not available for bucket monitor_events", ${conflicts} revision conflicts)`;
}
