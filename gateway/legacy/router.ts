import type { Context } from 'hono';
import type { LegacyEnv } from './env.ts';
import { allowHeader } from '../../lib/allow.ts';
import { empty } from './http.ts';

// The legacy API's routing, as its route table worked (docs/compatibility.md#legacy-api): routes are
// regular expressions over the path; a path that matches only under other methods is a 405 naming
// them, any other path a 404; HEAD is answered as GET without the body.

type LegacyMethod = 'GET' | 'POST' | 'DELETE';

export interface LegacyRoute {
  method: LegacyMethod;
  /** Anchored; its captures are the handler's parameters, percent-decoded. */
  pattern: RegExp;
  handle(c: Context<LegacyEnv>, params: string[]): Response | Promise<Response>;
}

/** A name in a path, as the legacy API restricted them. */
export const NAME = '([\\w.-]+)';

export const route = (method: LegacyMethod, pattern: string, handle: LegacyRoute['handle']): LegacyRoute => ({
  method,
  pattern: new RegExp(`^${pattern}$`),
  handle,
});

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Routes a request: the first route of the method whose pattern matches, else 405 or 404. */
export function dispatch(
  routes: readonly LegacyRoute[],
  c: Context<LegacyEnv>,
): Response | Promise<Response> {
  const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
  const path = c.req.path;
  const allowed = new Set<string>();
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    if (r.method === method)
      return r.handle(
        c,
        m.slice(1).map((p) => decode(p ?? '')),
      );
    allowed.add(r.method);
  }
  if (allowed.size === 0) return empty(c, 404);
  c.header('Allow', allowHeader(allowed));
  return empty(c, 405);
}
