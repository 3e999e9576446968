import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { trustFailure } from '../../lib/tls.ts';
import { CliError, usageError } from '../errors.ts';

// One HTTP exchange over node:http or node:https: TLS with the operator's authorities (or none
// checked), an overall deadline, the body read whole. Failures to reach the server become one line
// naming the URL (never its query, which may hold a continue token, nor any header).

interface TlsOptions {
  /** PEM file of the authorities to trust instead of the system's. */
  trustedCaFile?: string;
  insecureSkipTlsVerify?: boolean;
}

interface HttpRequest {
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  tls?: TlsOptions;
}

interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

const caCache = new Map<string, string>();

function readCa(path: string): string {
  let pem = caCache.get(path);
  if (pem === undefined) {
    try {
      pem = readFileSync(path, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw usageError(
        `--trusted-ca-file: cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`,
      );
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----'))
      throw usageError(`--trusted-ca-file: ${path} holds no PEM certificate`);
    caCache.set(path, pem);
  }
  return pem;
}

/** One line for a request that got no HTTP answer. */
function unreachable(req: HttpRequest, err: NodeJS.ErrnoException): CliError {
  const where = `${req.url.protocol}//${req.url.host}`;
  const trust = trustFailure(err);
  if (trust)
    return new CliError(
      'failure',
      `TLS to ${where}: ${trust} (give --trusted-ca-file, or --insecure-skip-tls-verify)`,
    );
  const why: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed',
    ECONNRESET: 'connection reset',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    EPROTO: 'TLS handshake failed (is it an http:// server?)',
  };
  const text = (err.code && why[err.code]) ?? err.message;
  return new CliError('failure', `cannot reach the API at ${where}: ${text}`);
}

export async function send(req: HttpRequest): Promise<HttpResponse> {
  const https = req.url.protocol === 'https:';
  if (!https && req.url.protocol !== 'http:')
    throw usageError(`the API URL must start with http:// or https://, not ${req.url.protocol}`);
  const headers: Record<string, string> = { ...req.headers };
  if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
  const tls = https
    ? {
        ca: req.tls?.trustedCaFile ? readCa(req.tls.trustedCaFile) : undefined,
        rejectUnauthorized: !req.tls?.insecureSkipTlsVerify,
      }
    : {};
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: CliError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      r.destroy();
      reject(err);
    };
    const r = (https ? httpsRequest : httpRequest)(
      req.url,
      { method: req.method, headers, ...tls },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => fail(unreachable(req, err)));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    const timer = setTimeout(
      () =>
        fail(
          new CliError(
            'failure',
            `no answer from ${req.url.protocol}//${req.url.host} within ${req.timeoutMs / 1000} s (--timeout)`,
          ),
        ),
      req.timeoutMs,
    );
    r.on('error', (err) => fail(unreachable(req, err)));
    r.end(req.body);
  });
}

/** A server and how to talk to it: every request of one command goes to the same one. */
export interface Endpoint {
  /** The API's base URL (`http://host:8080`, maybe with a path prefix). */
  base: URL;
  timeoutMs: number;
  tls: TlsOptions;
}

/** The URL of `path` (which starts with `/`) under the endpoint's base, with `query`. */
export function urlOf(ep: Endpoint, path: string, query?: URLSearchParams): URL {
  const url = new URL(ep.base.href.replace(/\/+$/, '') + path);
  if (query) for (const [k, v] of query) url.searchParams.append(k, v);
  return url;
}

/** The base URL of a setting, or the usage error naming it. */
export function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`"${text}" is not a URL such as http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usageError(`the API URL must start with http:// or https://, not ${url.protocol}`);
  if (url.username || url.password)
    throw usageError('the API URL must not hold credentials: use --api-key or `monitorctl configure`');
  url.search = '';
  url.hash = '';
  return url;
}
