import { createHash, timingSafeEqual } from 'node:crypto';

// The decisions of the legacy client's HTTP socket (reference 2.2) that need no socket: which
// endpoint a request names, who it is, and the texts it answers with. Endpoints are found by their
// exact path, the query string apart.

/** The endpoints in the order the 404 help lists them, with the help texts the legacy client gave. */
const ENDPOINTS = {
  '/info': { help: 'Sensu client information', methods: ['GET'] },
  '/results': { help: 'Send check JSON results here', methods: ['POST'] },
  '/settings': {
    help: 'Get redacted Sensu settings (requires basic auth). Use ?redacted=false if you want the setting unredacted.',
    methods: ['GET'],
  },
  '/brew': { help: 'Ask Sensu to brew a cup of joe (try it!)', methods: ['GET'] },
} as const;
export type Endpoint = keyof typeof ENDPOINTS;

/** The 404 body: every endpoint with its help and methods. */
export const HELP = { endpoints: ENDPOINTS };

type Routed =
  | { kind: 'endpoint'; endpoint: Endpoint; query: string }
  | { kind: 'wrong-method'; allowed: readonly string[] }
  | { kind: 'not-found' };

export function routeRequest(method: string, url: string): Routed {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!Object.hasOwn(ENDPOINTS, path)) return { kind: 'not-found' };
  const endpoint = path as Endpoint;
  const allowed = ENDPOINTS[endpoint].methods;
  if (!(allowed as readonly string[]).includes(method)) return { kind: 'wrong-method', allowed };
  return { kind: 'endpoint', endpoint, query: q < 0 ? '' : url.slice(q + 1) };
}

/** The 405 text: the method list as the legacy client printed it (a Ruby array). */
export const wrongMethodText = (allowed: readonly string[]) =>
  `Valid methods for this endpoint: ${JSON.stringify(allowed)}`;

/** Whether an endpoint asks for credentials: `/settings` always, `/info` and `/results` when all are protected. */
export const needsAuth = (endpoint: Endpoint, protectAll: boolean) =>
  endpoint === '/settings' || (protectAll && endpoint !== '/brew');

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Whether an Authorization header carries the configured Basic credentials. Without both a user and
 * a password configured nothing matches. The password is what follows the first `:`, so it may hold
 * colons (the legacy API's split could not match such a password).
 */
export function authorized(header: string | undefined, user?: string, password?: string): boolean {
  if (!user || !password || !header) return false;
  const m = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first byte.
  const userOk = timingSafeEqual(digest(decoded.slice(0, colon)), digest(user));
  const passOk = timingSafeEqual(digest(decoded.slice(colon + 1)), digest(password));
  return userOk && passOk;
}

/** Whether `/settings` was asked for the raw settings: a `redacted=false` parameter, in any case. */
export function wantsRaw(query: string): boolean {
  return query.split('&').some((pair) => {
    const [k, val] = pair.split('=', 2);
    const decode = (s: string | undefined) => {
      try {
        return decodeURIComponent(s ?? '').toLowerCase();
      } catch {
        return '';
      }
    };
    return decode(k) === 'redacted' && decode(val) === 'false';
  });
}

/** The legacy client took any Content-Type naming `application/json` (with a charset or not). */
export const isJsonType = (contentType: string | undefined) =>
  contentType !== undefined && contentType.toLowerCase().includes('application/json');
