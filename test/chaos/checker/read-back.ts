/**
 * Reading the store back through the REST API (HAProxy's REST frontend): every event of the
 * namespace with the `executed` values of its history, and single events straight from KV for those
 * the list (served by a read model that trails the writes) does not show yet.
 */
import { adminAuth, getJson } from '../../harness/index.ts';
import { NS } from '../load/events.ts';

export interface StoredEvent {
  /** `check.executed` of each history entry, oldest first: one per application. */
  executed: number[];
  /** Statuses of the history entries, in the same order. */
  statuses: number[];
  occurrences: number;
  status: number;
}

export const eventKey = (entity: string, check: string) => `${entity}/${check}`;

function stored(e: any): StoredEvent {
  const history: Array<{ status: number; executed: number }> = e?.check?.history ?? [];
  return {
    executed: history.map((h) => h.executed),
    statuses: history.map((h) => h.status),
    occurrences: e?.check?.occurrences ?? 0,
    status: e?.check?.status ?? 0,
  };
}

const get = (apiUrl: string, path: string) =>
  getJson(`${apiUrl}${path}`, { headers: adminAuth, signal: AbortSignal.timeout(30_000) });

/** Every event of the namespace (optionally narrowed by a field selector), by `entity/check`. */
export async function listEvents(apiUrl: string, fieldSelector?: string): Promise<Map<string, StoredEvent>> {
  const out = new Map<string, StoredEvent>();
  let cont: string | null = null;
  const selector = fieldSelector ? `&fieldSelector=${encodeURIComponent(fieldSelector)}` : '';
  for (let page = 0; page < 10_000; page++) {
    const q: string = `limit=1000${selector}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await get(apiUrl, `/api/core/v2/namespaces/${NS}/events?${q}`);
    if (r.status !== 200 || !Array.isArray(r.body))
      throw new Error(`list events: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    for (const e of r.body) out.set(eventKey(e.entity?.metadata?.name, e.check?.metadata?.name), stored(e));
    cont = r.headers.get('monitor-continue');
    if (!cont) return out;
  }
  throw new Error('list events: too many pages');
}

/** One event straight from KV; undefined when it is not stored (404). Throws on other answers. */
export async function getEvent(
  apiUrl: string,
  entity: string,
  check: string,
): Promise<StoredEvent | undefined> {
  const r = await get(apiUrl, `/api/core/v2/namespaces/${NS}/events/${entity}/${check}`);
  if (r.status === 404) return undefined;
  if (r.status !== 200)
    throw new Error(`GET ${entity}/${check}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return stored(r.body);
}

/** Names of the entities of the namespace. */
export async function listEntities(apiUrl: string): Promise<Set<string>> {
  const out = new Set<string>();
  let cont: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const q: string = `limit=1000${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await get(apiUrl, `/api/core/v2/namespaces/${NS}/entities?${q}`);
    if (r.status !== 200 || !Array.isArray(r.body))
      throw new Error(`list entities: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    for (const e of r.body) out.add(e.metadata?.name);
    cont = r.headers.get('monitor-continue');
    if (!cont) return out;
  }
  throw new Error('list entities: too many pages');
}
