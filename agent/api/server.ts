import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as v from 'valibot';
import { describeIssues } from '../../proto/schemas/common.ts';
import { ApiEvent } from '../../proto/schemas/agent-input.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { allowHeader, methodServed } from '../../lib/allow.ts';
import type { Logger } from '../../lib/log.ts';
import type { EventSink } from '../events/prepare.ts';
import { listen, type Listener } from '../listen.ts';

// The agent HTTP API (docs/compatibility.md#agent-http-api): POST /events, GET /healthz, GET /version. Plain
// node:http: three routes do not need a framework, and it gives direct control over body size and timeouts.

/** Largest body of POST /events; a check event is a few KB, so this only stops abuse. */
const MAX_BODY_BYTES = 512 * 1024;
/** A refused body is still read up to this much so the client sees the 413, not a reset. */
const DRAIN_BYTES = 8 * 1024 * 1024;
/** Read and write timeouts of the server (Sensu uses 15 s for both). */
const API_TIMEOUT_MS = 15_000;

interface AgentApiDeps {
  sink: EventSink;
  connected: () => boolean;
  version: string;
  log: Logger;
}

const ROUTES: Record<string, string> = { '/events': 'POST', '/healthz': 'GET', '/version': 'GET' };

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly close = false,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: string, type: string, close = false): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    ...(close ? { Connection: 'close' } : {}),
  });
  res.end(body);
}
const sendJson = (res: ServerResponse, status: number, body: unknown, close = false) =>
  send(res, status, JSON.stringify(body), 'application/json', close);
const sendText = (res: ServerResponse, status: number, text: string) =>
  send(res, status, text, 'text/plain; charset=utf-8');

/** The whole body, or an HttpError 413 once it passes MAX_BODY_BYTES (after draining what is cheap). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    let tooBig = Number.isFinite(declared) && declared > MAX_BODY_BYTES;
    const parts: Buffer[] = [];
    let size = 0;
    const refuse = (close: boolean) =>
      reject(new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`, close));
    if (tooBig && declared > DRAIN_BYTES) {
      refuse(true);
      return;
    }
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooBig = true;
      if (!tooBig) parts.push(chunk);
      else if (size > DRAIN_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        refuse(true);
      }
    });
    req.on('end', () => (tooBig ? refuse(false) : resolve(Buffer.concat(parts))));
    req.on('error', reject);
  });
}

/** Parses the body of POST /events; throws HttpError 400 with a readable message. */
export function parseApiEvent(body: Buffer): Event {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${(err as Error).message}`);
  }
  const r = v.safeParse(ApiEvent, json);
  if (!r.success) throw new HttpError(400, `invalid event: ${describeIssues(r.issues)}`);
  return r.output as Event;
}

async function postEvent(req: IncomingMessage, res: ServerResponse, deps: AgentApiDeps): Promise<void> {
  const event = parseApiEvent(await readBody(req));
  try {
    await deps.sink.submit(event);
  } catch (err) {
    deps.log.warn('event from the HTTP API not queued', {
      error: (err as Error).message,
      check: event.check?.metadata.name,
    });
    sendJson(res, 500, { message: `event not queued: ${(err as Error).message}` });
    return;
  }
  res.writeHead(202, { 'Content-Length': 0 });
  res.end();
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: AgentApiDeps): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  const method = ROUTES[path];
  if (method === undefined) {
    sendJson(res, 404, { message: `no route for ${path}` });
    return;
  }
  if (!methodServed(req.method ?? '', [method])) {
    res.setHeader('Allow', allowHeader([method]));
    sendJson(res, 405, { message: `${req.method} is not allowed on ${path}` });
    return;
  }
  switch (path) {
    case '/events':
      return postEvent(req, res, deps);
    case '/healthz':
      if (deps.connected()) sendText(res, 200, 'ok');
      else sendText(res, 503, 'monitor backend unavailable');
      return;
    case '/version':
      sendJson(res, 200, { version: deps.version });
      return;
  }
}

function createApiServer(deps: AgentApiDeps): Server {
  const server = createServer((req, res) => {
    handle(req, res, deps).catch((err: unknown) => {
      if (err instanceof HttpError) {
        sendJson(res, err.status, { message: err.message }, err.close);
        if (err.close) res.on('finish', () => req.socket.destroy());
        return;
      }
      deps.log.error('agent API request failed', { error: err as Error });
      sendJson(res, 500, { message: 'internal error' });
    });
  });
  // Read timeout: the whole request (headers and body); write/idle timeout: the socket.
  server.requestTimeout = API_TIMEOUT_MS;
  server.headersTimeout = API_TIMEOUT_MS;
  server.timeout = API_TIMEOUT_MS;
  server.keepAliveTimeout = 5_000;
  return server;
}

/** Starts the API on host:port; rejects with a ListenError when the address cannot be bound. */
export async function startApi(host: string, port: number, deps: AgentApiDeps): Promise<Listener> {
  const server = createApiServer(deps);
  await listen('agent API', server, host, port);
  server.on('error', (err) => deps.log.warn('agent API server error', { error: err.message }));
  deps.log.info('agent API listening', { host, port });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
