/**
 * Plain HTTP helpers for tests: a JSON-ish fetch (and its HTTPS twin) and a polling wait.
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';

export interface JsonResponse<B = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else the raw text ('' when empty). */
  body: B;
}

/** Default per-request timeout of getJson when init.signal is not given. */
const DEFAULT_HTTP_TIMEOUT_MS = 10_000;

/**
 * fetch(url, init) and read the whole body; `body` is the parsed JSON when it
 * parses, else the text. Never throws on HTTP error statuses (look at
 * `status`); throws on connection errors and after DEFAULT_HTTP_TIMEOUT_MS.
 * A plain object or array given as `init.body` is sent as JSON.
 */
export async function getJson<B = any>(
  url: string,
  init: Omit<RequestInit, 'body'> & { body?: RequestInit['body'] | object } = {},
): Promise<JsonResponse<B>> {
  const { body, ...rest } = init;
  const req: RequestInit = { ...rest, signal: init.signal ?? AbortSignal.timeout(DEFAULT_HTTP_TIMEOUT_MS) };
  if (body !== undefined && body !== null) {
    const plain =
      typeof body === 'object' && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype);
    if (plain) {
      req.body = JSON.stringify(body);
      const headers = new Headers(rest.headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      req.headers = headers;
    } else {
      req.body = body as RequestInit['body'];
    }
  }
  const res = await fetch(url, req);
  const text = await res.text();
  let parsed: unknown = text;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep the text */
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as B };
}

/** TLS of a client call: the authorities to trust, and a client certificate to present. */
export interface ClientTls {
  ca: string;
  cert?: string;
  key?: string;
}

/**
 * getJson over node:https with `tls` (fetch cannot be given authorities or a client certificate);
 * the same answer shape. Only a string or plain-object body.
 */
export function getJsonTls<B = any>(
  url: string,
  tls: ClientTls,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | object;
    timeoutMs?: number;
  } = {},
): Promise<JsonResponse<B>> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const read = (p: string) => readFileSync(p, 'utf8');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: init.method ?? 'GET',
        headers,
        ca: read(tls.ca),
        cert: tls.cert ? read(tls.cert) : undefined,
        key: tls.key ? read(tls.key) : undefined,
        timeout: init.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text.length > 0 ? JSON.parse(text) : text;
          } catch {
            /* keep the text */
          }
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve({ status: res.statusCode ?? 0, headers: h, body: parsed as B });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

interface WaitForOptions {
  timeoutMs: number;
  /** Pause between attempts (default 200 ms). */
  intervalMs?: number;
  /** Used in the timeout message: "timed out after Xms waiting for <what>". */
  what: string;
}

function describe(v: unknown): string {
  if (v instanceof Error) return v.message;
  try {
    const s = JSON.stringify(v);
    if (s === undefined) return String(v);
    return s.length > 2000 ? `${s.slice(0, 2000)}...` : s;
  } catch {
    return String(v);
  }
}

/**
 * Calls fn until it returns something other than undefined, null or false,
 * and resolves with that. A thrown error counts as "not yet". After timeoutMs
 * it rejects with "timed out after <timeoutMs>ms waiting for <what>", followed
 * by the last error thrown or the last value returned. An attempt that hangs
 * does not delay the timeout.
 */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  opts: WaitForOptions,
): Promise<T> {
  const interval = opts.intervalMs ?? 200;
  const deadline = Date.now() + opts.timeoutMs;
  let last: { kind: 'none' } | { kind: 'error'; err: unknown } | { kind: 'value'; value: unknown } = {
    kind: 'none',
  };
  const HUNG = Symbol('hung');
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    let timer: NodeJS.Timeout | undefined;
    try {
      const v = await Promise.race([
        Promise.resolve().then(fn),
        new Promise<typeof HUNG>((resolve) => {
          timer = setTimeout(() => resolve(HUNG), remaining);
        }),
      ]);
      if (v === HUNG) {
        if (last.kind === 'none') last = { kind: 'error', err: new Error('the last attempt did not finish') };
        break;
      }
      if (v !== undefined && v !== null && v !== false) return v as T;
      last = { kind: 'value', value: v };
    } catch (err) {
      last = { kind: 'error', err };
    } finally {
      clearTimeout(timer);
    }
    const pause = Math.min(interval, deadline - Date.now());
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
  }
  let msg = `timed out after ${opts.timeoutMs}ms waiting for ${opts.what}`;
  if (last.kind === 'error') msg += `; last error: ${describe(last.err)}`;
  else if (last.kind === 'value') msg += `; last value: ${describe(last.value)}`;
  throw new Error(msg);
}
