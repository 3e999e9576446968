import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { Backend } from './backend.ts';
import { getJson, waitFor, type JsonResponse } from './http.ts';

// What the legacy API's suites share: a caller of one backend's legacy port, the check of a bare
// answer, a wait for a list, and the payloads a file-writing handler received.

type LegacyCall = <B = any>(
  path: string,
  method?: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<JsonResponse<B>>;

/**
 * Requests to `backend()`'s legacy API with `defaults` headers: a string body is sent as it is (as
 * JSON), an object as its JSON.
 */
export const legacyApi =
  (backend: () => Backend, defaults: Record<string, string> = {}): LegacyCall =>
  (path, method = 'GET', body, headers = defaults) =>
    getJson(`${backend().legacyUrl}${path}`, {
      method,
      headers: { ...headers, ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}) },
      ...(body === undefined ? {} : { body: body as object }),
    });

/** A bare answer: the status and no body at all. */
export function bare(r: JsonResponse, status: number, what: string): void {
  assert.is(r.status, status, `${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.is(r.body, '', `${what}: no body`);
}

/** Waits for the legacy list at `path` (the read model trails writes by milliseconds) to satisfy `pred`. */
export const waitLegacyList = (
  legacy: LegacyCall,
  path: string,
  pred: (items: any[]) => boolean,
  what: string,
) =>
  waitFor(
    async () => {
      const r = await legacy<any[]>(path);
      return r.status === 200 && pred(r.body) ? r.body : undefined;
    },
    { timeoutMs: 5000, intervalMs: 50, what },
  );

/** The payloads a handler writing one file per event (`cat > <dir>/...`) received so far. */
export function handledIn(dir: string): any[] {
  const out: any[] = [];
  for (const f of readdirSync(dir)) {
    try {
      out.push(JSON.parse(readFileSync(join(dir, f), 'utf8')));
    } catch {
      /* still being written */
    }
  }
  return out;
}
