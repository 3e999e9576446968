import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { legacyRedactFields } from '../../../proto/legacy/redact.ts';
import { VERSION } from '../../../proto/version.ts';
import { REDACTED, redactValue } from '../../../lib/redact.ts';
import { listen, type Listener } from '../../listen.ts';
import {
  HELP,
  authorized,
  isJsonType,
  needsAuth,
  routeRequest,
  wantsRaw,
  wrongMethodText,
  type Endpoint,
} from './http-routes.ts';
import { acceptResults } from './results.ts';
import type { LegacyInputDeps } from './settings.ts';

// The legacy client's HTTP socket (reference 2.2, docs/compatibility.md#legacy-client): /info,
// /results, /settings, /brew, with the legacy statuses, reason phrases and bodies, every answer JSON.

/** Largest body of POST /results, as the agent's own API. */
export const MAX_BODY_BYTES = 512 * 1024;
const TIMEOUT_MS = 15_000;
const REALM = 'Basic realm="Sensu Client Restricted Area"';

class Answer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly reason?: string,
    readonly headers: Record<string, string> = {},
  ) {}
}
const response = (text: string) => ({ response: text });

function send(res: ServerResponse, a: Answer): void {
  if (res.headersSent) return;
  const body = JSON.stringify(a.body);
  const headers = {
    ...a.headers,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
  };
  if (a.reason !== undefined) res.writeHead(a.status, a.reason, headers);
  else res.writeHead(a.status, headers);
  res.end(body);
}

/** Whether the request has a body at all (a length or chunks); without one the legacy client saw nil. */
const hasBody = (req: IncomingMessage) =>
  req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const tooBig = () => new Answer(413, response(`Request body larger than ${MAX_BODY_BYTES} bytes`));
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
      reject(tooBig());
      return;
    }
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) parts.push(chunk);
      else {
        req.removeAllListeners('data');
        reject(tooBig());
      }
    });
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

interface HttpState {
  deps: LegacyInputDeps;
  /** The settings as `/settings` shows them; they do not change while the agent runs. */
  redacted: unknown;
}

async function postResults(req: IncomingMessage, s: HttpState): Promise<Answer> {
  if (!isJsonType(req.headers['content-type']) || !hasBody(req))
    return new Answer(415, response('Invalid content type'), 'Only application/json content type accepted');
  const body = await readBody(req);
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return new Answer(400, response('Failed to parse JSON body'), 'Failed to parse JSON body');
  }
  const outcome = await acceptResults(doc, s.deps, 'http');
  switch (outcome.kind) {
    case 'ok':
      return new Answer(202, response('ok'), 'OK');
    // The legacy client let the validation error escape as a 500; the sender is told what is wrong.
    case 'invalid':
      return new Answer(400, response(outcome.message));
    case 'error':
      return new Answer(500, response(`check result not queued: ${outcome.message}`));
  }
}

async function answer(req: IncomingMessage, s: HttpState): Promise<Answer> {
  const routed = routeRequest(req.method ?? 'GET', req.url ?? '/');
  if (routed.kind === 'not-found') return new Answer(404, HELP);
  if (routed.kind === 'wrong-method') return new Answer(405, response(wrongMethodText(routed.allowed)));
  const { endpoint, query } = routed;
  const client = s.deps.settings.client;
  const hs = client.http_socket;
  if (
    needsAuth(endpoint, hs.protect_all_endpoints) &&
    !authorized(req.headers.authorization, hs.user, hs.password)
  )
    return new Answer(
      401,
      response('You must be authenticated using your http_options user and password settings'),
      'Unauthorized',
      { 'WWW-Authenticate': REALM },
    );
  const handlers: Record<Endpoint, () => Answer | Promise<Answer>> = {
    '/info': () => {
      const about = { version: VERSION };
      // `sensu` is where tools written for the legacy client read the version (as the legacy API's /info).
      return new Answer(200, {
        monitor: about,
        sensu: about,
        transport: { name: 'monitor', connected: s.deps.connected() },
      });
    },
    '/results': () => postResults(req, s),
    '/settings': () => new Answer(200, wantsRaw(query) ? s.deps.settings : s.redacted),
    '/brew': () => new Answer(418, response("I'm a teapot!"), "I'm a teapot"),
  };
  return handlers[endpoint]();
}

/** The settings as `/settings` shows them by default: the client's redact list (else the legacy one), and its signature. */
export function redactSettings(settings: LegacyInputDeps['settings']): unknown {
  const out = redactValue(settings, legacyRedactFields(settings.client));
  if (out.client.signature === undefined) return out;
  return { ...out, client: { ...out.client, signature: REDACTED } };
}

export async function startLegacyHttp(host: string, port: number, deps: LegacyInputDeps): Promise<Listener> {
  const state: HttpState = { deps, redacted: redactSettings(deps.settings) };
  const server = createServer((req, res) => {
    answer(req, state)
      .catch((err: unknown) => {
        if (err instanceof Answer) return err;
        deps.log.error('legacy HTTP socket request failed', { error: err as Error });
        return new Answer(500, response('Internal Server Error: check the agent log for details'));
      })
      .then((a) => {
        send(res, a);
        // A refused body was not read to its end: the connection cannot carry another request.
        if (a.status === 413) res.on('finish', () => req.socket.destroy());
      });
  });
  server.requestTimeout = TIMEOUT_MS;
  server.headersTimeout = TIMEOUT_MS;
  server.timeout = TIMEOUT_MS;
  server.keepAliveTimeout = 5_000;
  await listen('legacy HTTP socket', server, host, port);
  server.on('error', (err) => deps.log.warn('legacy HTTP socket error', { error: err.message }));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
