/**
 * Writes one result to every entity/check pair through the REST API (`POST .../events/<entity>/<check>`),
 * closed loop over keep-alive connections. The first round creates the proxy entities and their
 * events; a later round updates every event once more (its check history grows by one entry).
 */
import { ADMIN } from '../../../test/harness/index.ts';
import { connect } from '../../lib/http1.ts';
import { authHeader, count, describeCounts, JSON_HEADERS, Workload } from '../../rest/workload.ts';

export interface SeedFigures {
  events: number;
  seconds: number;
  perSecond: number;
}

export async function seedEvents(
  apiUrl: string,
  entities: number,
  checks: number,
  connections: number,
  round: number,
): Promise<SeedFigures> {
  // The round is in the output, so a second round really changes every event.
  const w = new Workload(entities, checks, `peer-round-${round}`);
  const headers = authHeader(`Key ${ADMIN.apiKey}`) + JSON_HEADERS;
  const statuses = new Map<string, number>();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(connections, w.pairs) }, async () => {
      const conn = connect('raw', apiUrl);
      try {
        while (w.next < w.pairs) {
          const k = w.next++;
          const res = await conn.request('POST', w.path(k), headers, w.body(k));
          count(statuses, String(res.status));
        }
      } finally {
        conn.close();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // 201 means durable in the KV: anything else leaves the store short of what the figures assume.
  if (statuses.size !== 1 || !statuses.has('201'))
    throw new Error(`writing ${w.pairs} events (round ${round}): ${describeCounts(statuses)}`);
  return { events: w.pairs, seconds, perSecond: w.pairs / seconds };
}
