import type { Hono } from 'hono';
import { METHOD_NAME_ALL } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

// Which methods serve a path, from the app's own route table, so that a path known under other
// methods is a 405 with `Allow` rather than a 404 (docs/compatibility.md#rest-edges). Middleware and
// catch-all routes (`app.use`, `app.all`) are registered under ALL and name no method: they are left
// out, and a catch-all (the legacy views) answers its own 405.

/**
 * The methods of the app's routes whose pattern matches a path; empty for a path no route knows.
 * The table is built at the first call, when every route is registered.
 */
// Any app's environment will do: only its route table is read.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function routeMethods(app: Hono<any>): (path: string) => string[] {
  let router: TrieRouter<string> | undefined;
  return (path) => {
    if (!router) {
      router = new TrieRouter<string>();
      for (const r of app.routes)
        if (r.method !== METHOD_NAME_ALL) router.add(METHOD_NAME_ALL, r.path, r.method);
    }
    return [...new Set(router.match(METHOD_NAME_ALL, path)[0].map(([method]) => method))];
  };
}
