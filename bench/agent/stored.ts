/**
 * How many of the agent's events the backend has stored, read through the REST API: the bench
 * gives every load connection its own check name and numbers its accepted events 1, 2, 3... in the
 * check output, so the stored output of check `<prefix><c>` is how many of connection c's events
 * reached the backend (the agent relays its outbox in order). The sum over the checks is the
 * number of events stored and acknowledged.
 */
import type { Backend } from '../../test/harness/index.ts';
import { CORE_API } from './config.ts';

export async function storedCount(backend: Backend, entity: string, prefix: string): Promise<number> {
  const r = await backend.get(`${CORE_API}/events/${entity}`, { signal: AbortSignal.timeout(5000) });
  if (r.status === 404) return 0;
  if (r.status !== 200 || !Array.isArray(r.body)) throw new Error(`GET events of ${entity}: ${r.status}`);
  let sum = 0;
  for (const e of r.body) {
    const name: unknown = e?.check?.metadata?.name;
    if (typeof name === 'string' && name.startsWith(prefix)) sum += Number(e.check.output) || 0;
  }
  return sum;
}

/** Polls storedCount until it reaches `total` or `timeoutMs` passes; the time it got there, or NaN. */
export async function waitStored(
  backend: Backend,
  entity: string,
  prefix: string,
  total: number,
  timeoutMs: number,
  onProgress?: (n: number, t: number) => void,
): Promise<number> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const n = await storedCount(backend, entity, prefix).catch(() => -1);
    const t = performance.now();
    if (n >= 0) onProgress?.(n, t);
    if (n >= total) return t;
    if (t > end) return NaN;
    await new Promise((r) => setTimeout(r, 100));
  }
}
