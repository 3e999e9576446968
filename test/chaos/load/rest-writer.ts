/**
 * A REST client writing events through HAProxy's REST frontend, as a careful integration does: each
 * logical event gets an `Idempotency-Key`, and any answer but a 201 or a final refusal makes it send
 * the very same request again (same key, same body) after a short backoff, until RETRY_WINDOW_MS.
 * Each writer posts to proxy entities of its own, ENTITIES of them in turn, with the naming of
 * ./events.ts per entity.
 *
 * Why several entities: the store recognises a retry among the last 8 messages that wrote the event
 * it touches (docs/architecture.md, "Atomic turns", limits). A writer at 25 events/s on one entity
 * writes each of its checks a few times a second, so a retry a few seconds late (a backend killed
 * mid-request, the attempt timeout) would no longer be recognised; spread over ENTITIES entities,
 * each check is written about once every ENTITIES × 8 / rate seconds, as with many real clients.
 */
import { randomUUID } from 'node:crypto';
import { adminAuth, getJson, sleep } from '../../harness/index.ts';
import type { History } from '../checker/history.ts';
import { checkBody, eventSlot, NS } from './events.ts';

/** A client gives up after this long: the event is then of unknown outcome (`info`). */
const RETRY_WINDOW_MS = 60_000;
const ATTEMPT_TIMEOUT_MS = 6000;
const ENTITIES = 25;
/**
 * Logical events in flight per writer. A real client blocks when its calls do not return; without a
 * cap, a cluster-wide outage would pile up thousands of retrying requests (100/s for a minute) and the
 * test process would hammer HAProxy with them, slowing the very restart it waits for.
 */
const MAX_IN_FLIGHT = 32;

export class RestWriter {
  private seq = 0;
  readonly entities: string[];
  private readonly inflight = new Set<Promise<void>>();
  /** Attempts that did not end in a 201 or a final refusal. */
  retries = 0;

  constructor(
    name: string,
    private readonly apiUrl: string,
    private readonly history: History,
  ) {
    this.entities = Array.from({ length: ENTITIES }, (_, i) => `${name}-${i}`);
  }

  get outstanding(): number {
    return this.inflight.size;
  }

  /** Starts one more logical event; false (nothing sent) while MAX_IN_FLIGHT are still retrying. */
  submit(): boolean {
    if (this.inflight.size >= MAX_IN_FLIGHT) return false;
    const n = this.seq++;
    const entity = this.entities[n % ENTITIES]!;
    const { check, token } = eventSlot('r', Math.floor(n / ENTITIES) + 1);
    const op = this.history.invoke({ process: entity, source: 'rest', entity, check, token });
    const key = randomUUID();
    // No `id` in the body: a plain REST client sends none; the Idempotency-Key is its retry contract.
    const body = {
      entity: { metadata: { name: entity, namespace: NS }, entity_class: 'proxy' },
      check: checkBody(check, token),
    };
    const p = (async () => {
      const deadline = Date.now() + RETRY_WINDOW_MS;
      for (let attempt = 0; Date.now() < deadline; attempt++) {
        op.attempts++;
        try {
          const r = await getJson(`${this.apiUrl}/api/core/v2/namespaces/${NS}/events`, {
            method: 'POST',
            headers: { ...adminAuth, 'Idempotency-Key': key },
            body,
            signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
          });
          if (r.status === 201) return this.history.complete(op, 'ok');
          const error = `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          // A 4xx is final (the request itself is wrong), except for the answers that mean "later".
          if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429)
            return this.history.complete(op, 'fail', { error });
          op.error = error;
        } catch (err) {
          op.error = (err as Error).message;
        }
        this.retries++;
        await sleep(Math.min(1000, 100 * 2 ** attempt));
      }
      this.history.complete(op, 'info', { error: `gave up: ${op.error}` });
    })();
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
    return true;
  }

  /** Waits for every logical event in flight to end (bounded by the retry window). */
  async drain(): Promise<void> {
    await Promise.all([...this.inflight]);
  }
}
