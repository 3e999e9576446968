/** bench rest: the workload (which event request k writes), read-after-write checking and its figures. */
import { int } from '../lib/format.ts';
import type { HttpConn } from '../lib/http1.ts';
import { Samples } from '../lib/stats.ts';
import { API } from './config.ts';

// --- the workload ------------------------------------------------------------------------------

/**
 * Request k goes to entity k mod E and check (k / E) mod C, so requests in flight at once go to
 * different entities (different actors), and every pair comes round again after E x C requests.
 */
export class Workload {
  readonly pairs: number;
  /** The last k sent for each pair: a read that finds a later write is not a mismatch. */
  readonly lastSent: Int32Array;
  next = 0;
  constructor(
    readonly entities: number,
    readonly checks: number,
    readonly tag: string,
  ) {
    this.pairs = entities * checks;
    this.lastSent = new Int32Array(this.pairs).fill(-1);
  }

  entity(k: number): string {
    return `rest-${k % this.entities}`;
  }
  check(k: number): string {
    return `check-${Math.floor(k / this.entities) % this.checks}`;
  }
  path(k: number): string {
    return `${API}/events/${this.entity(k)}/${this.check(k)}`;
  }
  output(k: number): string {
    return `${this.check(k)} ${this.tag} ${k}`;
  }
  status(k: number): number {
    return k % 13 === 0 ? 1 : 0;
  }

  body(k: number): string {
    return JSON.stringify({
      entity: { metadata: { name: this.entity(k) } },
      check: {
        metadata: { name: this.check(k) },
        status: this.status(k),
        output: this.output(k),
        interval: 60,
      },
    });
  }
}

export const JSON_HEADERS = 'Content-Type: application/json\r\n';
export const authHeader = (credential: string) => `Authorization: ${credential}\r\n`;

export interface RawFigures {
  latency: Samples;
  checked: number;
  mismatches: number;
  superseded: number;
  bytes: number;
  firstMismatch?: string;
}
export const newRaw = (): RawFigures => ({
  latency: new Samples(),
  checked: 0,
  mismatches: 0,
  superseded: 0,
  bytes: 0,
});

/** GET of event k right after its 201: latency, and whether it is the event just written. */
export async function readAfterWrite(
  conn: HttpConn,
  w: Workload,
  k: number,
  auth: string,
  raw: RawFigures | undefined,
): Promise<void> {
  const t = performance.now();
  const res = await conn.request('GET', w.path(k), auth);
  const took = performance.now() - t;
  if (!raw) return;
  raw.latency.add(took);
  raw.checked++;
  raw.bytes += res.body.length;
  let problem: string | undefined;
  if (res.status !== 200) problem = `GET answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`;
  else {
    try {
      const ev = JSON.parse(res.body.toString('utf8')) as {
        entity?: { metadata?: { name?: string } };
        check?: { metadata?: { name?: string }; output?: string; status?: number };
      };
      if (
        ev.check?.output !== w.output(k) ||
        ev.check?.status !== w.status(k) ||
        ev.entity?.metadata?.name !== w.entity(k) ||
        ev.check?.metadata?.name !== w.check(k)
      ) {
        problem = `expected output "${w.output(k)}", read "${ev.check?.output}" (entity ${ev.entity?.metadata?.name}, check ${ev.check?.metadata?.name})`;
      }
    } catch (err) {
      problem = `GET body is not JSON: ${(err as Error).message}`;
    }
  }
  if (!problem) return;
  // A later POST of the same pair may have landed in between: not a stale read.
  if (w.lastSent[k % w.pairs] !== k) {
    raw.superseded++;
    return;
  }
  raw.mismatches++;
  raw.firstMismatch ??= problem;
}

export const count = (m: Map<string, number>, key: string, by = 1) => m.set(key, (m.get(key) ?? 0) + by);
export const describeCounts = (m: Map<string | number, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} x${int(v)}`)
    .join(', ');
