import { Hono, type Context } from 'hono';
import type { Asset, DashboardAssets } from './assets.ts';

/** Headers of every dashboard answer: no sniffing, no framing, no referrer to other sites. */
const SAFETY = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
} as const;

function send(c: Context, a: Asset, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = { ...SAFETY, ...extra, ETag: a.etag, 'Cache-Control': a.cache };
  const given = c.req.header('If-None-Match');
  if (given && given.split(',').some((t) => t.trim() === a.etag))
    return new Response(null, { status: 304, headers });
  headers['Content-Type'] = a.type;
  return new Response(c.req.method === 'HEAD' ? null : a.body, { status: 200, headers });
}

/**
 * The web dashboard on the API port (docs/architecture.md#dashboard): `/` is the page, whose
 * routes live after `#`, and `/static/...` its modules, styles and the vendor modules. Public,
 * like `/auth`: the page signs in through the API, and every datum comes from the API.
 */
export function dashboardRoutes(assets: DashboardAssets): Hono {
  const app = new Hono();
  const shell = (c: Context) => send(c, assets.shell, { 'Content-Security-Policy': assets.csp });
  app.on(['GET', 'HEAD'], '/', shell);
  app.on(['GET', 'HEAD'], '/index.html', shell);
  app.on(['GET', 'HEAD'], '/static/*', (c, next) => {
    const a = assets.files.get(c.req.path);
    return a ? send(c, a) : next();
  });
  return app;
}
