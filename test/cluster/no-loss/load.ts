/**
 * The load of the no-loss suite (test/cluster/no-loss.test.ts) and its ledger: events to each
 * agent's HTTP API (acknowledged = 202) and from a REST client that retries with the same
 * Idempotency-Key across the backends (acknowledged = 201), each recorded with the chaos round it
 * was sent in.
 */
import { randomUUID } from 'node:crypto';
import { adminAuth, getJson, sleep, type AgentProc, type Backend } from '../../harness/index.ts';

export const NS = 'default';
const PROXIES = ['proxy-0', 'proxy-1', 'proxy-2', 'proxy-3'];
/** Events per second: per agent, and for the REST client. Modest: the machine has two cores. */
const AGENT_RATE = 12;
const REST_RATE = 20;
/** A good REST client gives up on an event after this long; only a 201 counts as acknowledged. */
const REST_RETRY_WINDOW_MS = 30_000;
const REST_ATTEMPT_TIMEOUT_MS = 10_000;

export interface Sent {
  source: 'agent' | 'rest';
  /** The agent, or the backends the REST client tried. */
  via: string;
  entity: string;
  check: string;
  /** The chaos round running when the event was sent. */
  round: string;
  acked: boolean;
  attempts: number;
  lastError?: string;
}

export const ledger: Sent[] = [];
let round = 'warm-up';
export const rounds: string[] = ['warm-up'];
export const setRound = (name: string) => {
  round = name;
  rounds.push(name);
  console.log(`[no-loss] ${new Date().toISOString()} round: ${name}`);
};

const pad = (n: number) => String(n).padStart(6, '0');

// --- load -------------------------------------------------------------------------------------------

/** Calls `fn(seq)` `rate` times a second until `stop()`; never bursts to catch up more than a second. */
function paced(rate: number, stopped: () => boolean, fn: (seq: number) => void): Promise<void> {
  return (async () => {
    const step = 1000 / rate;
    let next = Date.now();
    for (let seq = 1; !stopped(); seq++) {
      fn(seq);
      next += step;
      const now = Date.now();
      if (now - next > 1000) next = now; // the event loop stalled: skip rather than flood
      await sleep(Math.max(0, next - now));
    }
  })();
}

/** One event to an agent's HTTP API; no retry (a retry after a lost 202 would be a second event). */
async function agentEvent(agent: AgentProc, seq: number, inflight: Set<Promise<void>>): Promise<void> {
  const rec: Sent = {
    source: 'agent',
    via: agent.name,
    entity: agent.name,
    check: `${agent.name}-${pad(seq)}`,
    round,
    acked: false,
    attempts: 1,
  };
  ledger.push(rec);
  const p = (async () => {
    try {
      const r = await getJson(`${agent.apiUrl}/events`, {
        method: 'POST',
        body: {
          check: { metadata: { name: rec.check }, status: 0, output: `sent in ${rec.round}`, interval: 60 },
        },
        signal: AbortSignal.timeout(REST_ATTEMPT_TIMEOUT_MS),
      });
      if (r.status === 202) rec.acked = true;
      else rec.lastError = `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
    } catch (err) {
      rec.lastError = (err as Error).message;
    }
  })();
  inflight.add(p);
  await p.finally(() => inflight.delete(p));
}

/**
 * One logical REST event, retried as a good client does: same body and same Idempotency-Key header,
 * next backend each attempt, until a 201 or the window ends.
 */
async function restEvent(
  backends: Map<string, Backend>,
  seq: number,
  inflight: Set<Promise<void>>,
): Promise<void> {
  const entity = PROXIES[seq % PROXIES.length]!;
  const key = randomUUID();
  const rec: Sent = {
    source: 'rest',
    via: '',
    entity,
    check: `r-${pad(seq)}`,
    round,
    acked: false,
    attempts: 0,
  };
  ledger.push(rec);
  // No `id` in the body: a plain REST client sends none, and the Idempotency-Key header is the
  // contract for its retries.
  const body = {
    entity: { metadata: { name: entity, namespace: NS }, entity_class: 'proxy' },
    check: {
      metadata: { name: rec.check, namespace: NS },
      status: 0,
      output: `sent in ${rec.round}`,
      interval: 60,
    },
  };
  const p = (async () => {
    const deadline = Date.now() + REST_RETRY_WINDOW_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const live = [...backends.values()];
      const b = live[(seq + attempt) % live.length]!;
      rec.attempts++;
      rec.via += `${rec.via ? ',' : ''}${b.name}`;
      try {
        const r = await getJson(`${b.apiUrl}/api/core/v2/namespaces/${NS}/events`, {
          method: 'POST',
          headers: { ...adminAuth, 'Idempotency-Key': key },
          body,
          signal: AbortSignal.timeout(Math.max(1, Math.min(REST_ATTEMPT_TIMEOUT_MS, deadline - Date.now()))),
        });
        if (r.status === 201) {
          rec.acked = true;
          return;
        }
        rec.lastError = `${b.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
      } catch (err) {
        rec.lastError = `${b.name}: ${(err as Error).message}`;
      }
      await sleep(Math.min(1000, 100 * 2 ** attempt));
    }
  })();
  inflight.add(p);
  await p.finally(() => inflight.delete(p));
}

/** The whole load: both agents and the REST client (to the live backends), paced, until stop(). */
export function startLoad(agents: AgentProc[], backends: Map<string, Backend>): { stop(): Promise<void> } {
  let stopped = false;
  const inflight = new Set<Promise<void>>();
  const loops = [
    ...agents.map((a) =>
      paced(
        AGENT_RATE,
        () => stopped,
        (seq) => {
          void agentEvent(a, seq, inflight);
        },
      ),
    ),
    paced(
      REST_RATE,
      () => stopped,
      (seq) => {
        void restEvent(backends, seq, inflight);
      },
    ),
  ];
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      // Every REST event ends within its retry window: this wait is bounded by it.
      await Promise.all([...inflight]);
    },
  };
}
