/**
 * A small keep-alive HTTP/1.1 client for load generation, cheaper per request than `node:http`
 * (no IncomingMessage/ClientRequest objects, no header validation): one request in flight per
 * connection, requests written as one string, responses parsed from the socket's bytes
 * (Content-Length or chunked bodies). `NodeHttpConn` does the same through `node:http` with a
 * keep-alive Agent, for comparison (BENCH_REST_CLIENT=node). An `https:` URL gives the raw client a
 * TLS socket that accepts any certificate (peers such as Icinga 2 serve their API over HTTPS only,
 * with a self-signed CA the benchmark made); plain URLs keep the plain TCP socket.
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';

export interface HttpResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface HttpConn {
  /** Sends one request and resolves with its response; one at a time per connection. */
  request(method: string, path: string, headers: string, body?: string): Promise<HttpResponse>;
  readonly closed: boolean;
  close(): void;
}

const CRLF2 = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

/**
 * One TCP connection (TLS when `secure`, certificate not verified); `headers` is a preformatted
 * block of `Name: value\r\n` lines.
 */
export class RawHttpConn implements HttpConn {
  private socket: net.Socket;
  private buf: Buffer = EMPTY;
  private pending: { resolve: (r: HttpResponse) => void; reject: (e: Error) => void } | undefined;
  private head:
    | { status: number; headers: Record<string, string>; bodyStart: number; length: number; chunked: boolean }
    | undefined;
  private connected: Promise<void>;
  closed = false;

  constructor(
    readonly host: string,
    readonly port: number,
    secure = false,
  ) {
    // A TLS socket is ready for requests after the handshake ('secureConnect'), not at 'connect'.
    this.socket = secure
      ? tls.connect({ host, port, rejectUnauthorized: false }).setNoDelay(true)
      : net.connect({ host, port, noDelay: true });
    this.connected = new Promise((resolve, reject) => {
      this.socket.once(secure ? 'secureConnect' : 'connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.connected.catch(() => {
      /* reported by request() */
    });
    this.socket.on('data', (d: Buffer) => this.onData(d));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('connection closed')));
  }

  async request(method: string, path: string, headers: string, body?: string): Promise<HttpResponse> {
    if (this.closed) throw new Error('connection closed');
    if (this.pending) throw new Error('a request is already in flight on this connection');
    await this.connected;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      const len = body === undefined ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
      this.socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n${headers}${len}\r\n${body ?? ''}`,
      );
    });
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private fail(err: Error): void {
    this.closed = true;
    const p = this.pending;
    this.pending = undefined;
    p?.reject(err);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      if (!this.head) {
        const end = this.buf.indexOf(CRLF2);
        if (end < 0) return;
        const lines = this.buf.toString('latin1', 0, end).split('\r\n');
        const status = Number(lines[0]!.split(' ', 3)[1]);
        const headers: Record<string, string> = {};
        for (let i = 1; i < lines.length; i++) {
          const c = lines[i]!.indexOf(':');
          if (c > 0) headers[lines[i]!.slice(0, c).trim().toLowerCase()] = lines[i]!.slice(c + 1).trim();
        }
        const chunked = /chunked/i.test(headers['transfer-encoding'] ?? '');
        const length = chunked
          ? 0
          : status === 204 || status === 304 || (status >= 100 && status < 200)
            ? 0
            : Number(headers['content-length'] ?? 0);
        this.head = { status, headers, bodyStart: end + 4, length, chunked };
      }
      const h = this.head;
      let body: Buffer, consumed: number;
      if (h.chunked) {
        const r = dechunk(this.buf, h.bodyStart);
        if (!r) return;
        [body, consumed] = r;
      } else {
        if (this.buf.length < h.bodyStart + h.length) return;
        body = this.buf.subarray(h.bodyStart, h.bodyStart + h.length);
        consumed = h.bodyStart + h.length;
      }
      this.head = undefined;
      this.buf = consumed === this.buf.length ? EMPTY : this.buf.subarray(consumed);
      if (h.status >= 100 && h.status < 200) continue; // 100 Continue: the real answer follows
      const p = this.pending;
      this.pending = undefined;
      if ((h.headers.connection ?? '').toLowerCase() === 'close') {
        this.closed = true;
        this.socket.end();
      }
      p?.resolve({ status: h.status, headers: h.headers, body });
      if (!this.buf.length) return;
    }
  }
}

/** A chunked body from `start`: [body, bytes consumed] when complete, else undefined. */
function dechunk(buf: Buffer, start: number): [Buffer, number] | undefined {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const eol = buf.indexOf('\r\n', at, 'latin1');
    if (eol < 0) return undefined;
    const size = parseInt(buf.toString('latin1', at, eol).split(';')[0]!, 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    if (size === 0) {
      // The last chunk: optional trailer lines, then an empty line ("0\r\n\r\n" without trailers).
      const end = buf.indexOf(CRLF2, eol);
      if (end < 0) return undefined;
      return [parts.length === 0 ? EMPTY : parts.length === 1 ? parts[0]! : Buffer.concat(parts), end + 4];
    }
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** The same over `node:http` with a keep-alive Agent of one socket per connection object. */
class NodeHttpConn implements HttpConn {
  private readonly agent: http.Agent;
  closed = false;
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  }

  request(method: string, path: string, headers: string, body?: string): Promise<HttpResponse> {
    const hdrs: Record<string, string> = {};
    for (const line of headers.split('\r\n')) {
      const c = line.indexOf(':');
      if (c > 0) hdrs[line.slice(0, c)] = line.slice(c + 1).trim();
    }
    if (body !== undefined) hdrs['Content-Length'] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: this.host, port: this.port, method, path, headers: hdrs, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers as Record<string, string>,
              body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.closed = true;
    this.agent.destroy();
  }
}

export type ClientKind = 'raw' | 'node';

export function connect(kind: ClientKind, url: string): HttpConn {
  const u = new URL(url);
  const secure = u.protocol === 'https:';
  const port = Number(u.port || (secure ? 443 : 80));
  if (kind === 'node' && secure)
    throw new Error('the node:http client speaks plain HTTP only; use raw for https');
  return kind === 'node' ? new NodeHttpConn(u.hostname, port) : new RawHttpConn(u.hostname, port, secure);
}

/** Idle connections older than this are closed rather than reused: the server drops them after 5 s. */
const MAX_IDLE_MS = 3000;

/**
 * Connections for open-loop load: the most recently used idle one when there is one, a new one up
 * to `max`, else a wait in line (the wait counts in the caller's latency).
 */
export class ConnPool {
  private idle: Array<{ conn: HttpConn; since: number }> = [];
  private all = new Set<HttpConn>();
  private waiting: Array<(c: HttpConn) => void> = [];
  constructor(
    private readonly kind: ClientKind,
    private readonly url: string,
    readonly max: number,
  ) {}

  get size(): number {
    return this.all.size;
  }
  get queued(): number {
    return this.waiting.length;
  }

  async use<T>(fn: (c: HttpConn) => Promise<T>): Promise<T> {
    const c = await this.acquire();
    try {
      return await fn(c);
    } finally {
      this.release(c);
    }
  }

  private acquire(): Promise<HttpConn> {
    // Idle connections are in the order they were released: the stale ones are at the front.
    const now = performance.now();
    while (this.idle.length && (this.idle[0]!.conn.closed || now - this.idle[0]!.since >= MAX_IDLE_MS)) {
      const { conn } = this.idle.shift()!;
      conn.close();
      this.all.delete(conn);
    }
    while (this.idle.length) {
      const { conn } = this.idle.pop()!;
      if (!conn.closed) return Promise.resolve(conn);
      this.all.delete(conn);
    }
    if (this.all.size < this.max) {
      const c = connect(this.kind, this.url);
      this.all.add(c);
      return Promise.resolve(c);
    }
    return new Promise((r) => this.waiting.push(r));
  }

  private release(c: HttpConn): void {
    if (c.closed) {
      this.all.delete(c);
      const w = this.waiting.shift();
      if (w) {
        const n = connect(this.kind, this.url);
        this.all.add(n);
        w(n);
      }
      return;
    }
    const w = this.waiting.shift();
    if (w) w(c);
    else this.idle.push({ conn: c, since: performance.now() });
  }

  close(): void {
    for (const c of this.all) c.close();
    this.all.clear();
    this.idle = [];
  }
}
