/**
 * Watches a backend that is starting and notes when each step of "ready" is first seen, in ms since
 * its process was spawned. Polls every `pollMs` on the API port, one request after another (a
 * starting backend has CPU to spare for none of it), asking only for the steps not yet seen.
 */
import { ADMIN } from '../../../test/harness/index.ts';
import { SHARD_COUNT } from '../../../proto/names.ts';
import { API } from '../../rest/config.ts';

export interface Milestones {
  /** `GET /health` answers 200: the HTTP server listens (what the test harness waits for). */
  healthMs: number;
  /** An authenticated `GET .../events?limit=1` answers 200 (possibly empty: lists come from the read model, loaded after). */
  firstListMs: number;
  /** `GET .../events?limit=100` answers with `expectEvents` events (or 100 when more are stored). */
  listWithDataMs: number;
  /** `/health` reports every shard owned and activated (`shards.owned === SHARD_COUNT`). */
  shardsOwnedMs: number;
  /** `GET /ready` answers 200: shards held, lease renewed, NATS up, read models loaded. */
  readyMs: number;
}

const KEYS: Array<keyof Milestones> = [
  'healthMs',
  'firstListMs',
  'listWithDataMs',
  'shardsOwnedMs',
  'readyMs',
];

interface Answer {
  status: number;
  body: unknown;
}

async function get(url: string, auth: boolean): Promise<Answer | undefined> {
  try {
    const res = await fetch(url, {
      headers: auth ? { Authorization: `Key ${ADMIN.apiKey}` } : {},
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  } catch {
    return undefined; // not listening yet
  }
}

export async function watchStart(
  apiUrl: string,
  spawnedAt: number,
  expectEvents: number,
  timeoutMs: number,
  pollMs = 20,
): Promise<Milestones> {
  const seen: Partial<Milestones> = {};
  const at = () => performance.now() - spawnedAt;
  const want = Math.min(100, expectEvents);
  const deadline = performance.now() + timeoutMs;
  while (KEYS.some((k) => seen[k] === undefined)) {
    if (performance.now() > deadline)
      throw new Error(
        `backend start: after ${timeoutMs} ms still waiting for ${KEYS.filter((k) => seen[k] === undefined).join(', ')}`,
      );
    if (seen.healthMs === undefined || seen.shardsOwnedMs === undefined) {
      const h = await get(`${apiUrl}/health`, false);
      if (h?.status === 200) {
        seen.healthMs ??= at();
        const owned = (h.body as { shards?: { owned?: number } } | undefined)?.shards?.owned;
        if (owned === SHARD_COUNT) seen.shardsOwnedMs ??= at();
      }
    }
    if (seen.healthMs !== undefined) {
      if (
        seen.firstListMs === undefined &&
        (await get(`${apiUrl}${API}/events?limit=1`, true))?.status === 200
      )
        seen.firstListMs = at();
      if (seen.listWithDataMs === undefined) {
        const r = await get(`${apiUrl}${API}/events?limit=100`, true);
        if (r?.status === 200 && Array.isArray(r.body) && r.body.length >= want) seen.listWithDataMs = at();
      }
      if (seen.readyMs === undefined && (await get(`${apiUrl}/ready`, false))?.status === 200)
        seen.readyMs = at();
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return seen as Milestones;
}

export const MILESTONES = KEYS;
