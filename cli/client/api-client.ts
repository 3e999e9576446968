import type { IncomingHttpHeaders } from 'node:http';
import { CONTINUE_HEADER } from '../../proto/api.ts';
import type { Authenticator } from '../auth/credentials.ts';
import { CliError } from '../errors.ts';
import { ApiError, serverMessage } from './errors.ts';
import { send, urlOf, type Endpoint } from './http.ts';

// The REST API as commands use it: JSON in and out, the credential in every request (one retry after
// a 401 with renewed credentials), error answers thrown as ApiError (exit status by kind), and lists
// read page by page through the continue header.

type Query = Record<string, string | string[] | undefined>;

interface RequestOptions {
  query?: Query;
  /** Sent as JSON (a string is sent as it is). */
  body?: unknown;
  /** Default application/json; PATCH sends application/merge-patch+json. */
  contentType?: string;
  headers?: Record<string, string>;
}

interface ApiResponse<T> {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; undefined for an empty one. */
  body: T | undefined;
}

interface ListOptions {
  query?: Query;
  /** Items per request (`limit`); 0 or undefined: all in one request. */
  chunkSize?: number;
}

function searchParams(q: Query | undefined): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q ?? {})) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) p.append(k, one);
  }
  return p;
}

export class ApiClient {
  constructor(
    readonly endpoint: Endpoint,
    private readonly auth: Authenticator,
  ) {}

  async request<T = unknown>(method: string, path: string, o: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = urlOf(this.endpoint, path, searchParams(o.query));
    const body =
      o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const attempt = async () => {
      const authorization = await this.auth.header();
      return send({
        method,
        url,
        headers: {
          Accept: 'application/json',
          ...(body !== undefined ? { 'Content-Type': o.contentType ?? 'application/json' } : {}),
          ...(authorization ? { Authorization: authorization } : {}),
          ...o.headers,
        },
        body,
        timeoutMs: this.endpoint.timeoutMs,
        tls: this.endpoint.tls,
      });
    };
    let res = await attempt();
    if (res.status === 401 && (await this.auth.renew())) res = await attempt();
    if (res.status >= 400)
      throw new ApiError(res.status, serverMessage(res.status, res.text), `${method} ${path}`);
    let parsed: T | undefined;
    if (res.text.trim() !== '') {
      try {
        parsed = JSON.parse(res.text) as T;
      } catch {
        throw new CliError('failure', `${method} ${path}: the answer is not JSON`);
      }
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  async get<T = unknown>(path: string, query?: Query): Promise<T> {
    const res = await this.request<T>('GET', path, { query });
    return res.body as T;
  }

  post(path: string, body: unknown): Promise<ApiResponse<unknown>> {
    return this.request('POST', path, { body });
  }

  put(path: string, body: unknown): Promise<ApiResponse<unknown>> {
    return this.request('PUT', path, { body });
  }

  /** A JSON merge patch (RFC 7396). */
  patch(path: string, body: unknown): Promise<ApiResponse<unknown>> {
    return this.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
  }

  delete(path: string): Promise<ApiResponse<unknown>> {
    return this.request('DELETE', path);
  }

  /** The pages of a list: with a chunk size, `limit` and `continue` until the header is absent. */
  async *pages<T>(path: string, o: ListOptions = {}): AsyncGenerator<T[]> {
    const limit = o.chunkSize && o.chunkSize > 0 ? String(o.chunkSize) : undefined;
    let token: string | undefined;
    for (;;) {
      const res = await this.request<T[]>('GET', path, {
        query: { ...o.query, ...(limit ? { limit } : {}), ...(token ? { continue: token } : {}) },
      });
      if (!Array.isArray(res.body)) throw new CliError('failure', `GET ${path}: the answer is not a list`);
      yield res.body;
      const next = res.headers[CONTINUE_HEADER.toLowerCase()];
      token = Array.isArray(next) ? next[0] : next;
      if (!limit || !token) return;
    }
  }

  /** Every item of a list, read in pages of `chunkSize`. */
  async list<T>(path: string, o: ListOptions = {}): Promise<T[]> {
    const all: T[] = [];
    for await (const page of this.pages<T>(path, o)) all.push(...page);
    return all;
  }
}
