import { Hono, type Context } from 'hono';
import { configKeys } from '../../../proto/names.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { authorize } from '../http.ts';
import { page, pagingOf } from '../paginate.ts';

interface Silenced {
  metadata?: { namespace?: string };
  subscription?: string;
  check?: string;
}

/** Silenced entries by subscription or by check, in one namespace or (by check) in all. */
export function silencedExtraRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const send = (c: Context<ApiEnv>, ns: string | undefined, keep: (s: Silenced) => boolean) => {
    const s = c.get('subject');
    const entries = svc.config.entries<Silenced>(configKeys.prefix('silenced', ns)).filter(
      (e) =>
        keep(e.value) &&
        svc.authz.allowed(s, {
          verb: 'list',
          resource: 'silenced',
          namespace: e.value.metadata?.namespace,
        }),
    );
    return c.json(page(c, entries, (e) => e.key, pagingOf(c)).map((e) => e.value));
  };

  app.get('/namespaces/:ns/silenced/subscriptions/:sub', (c) => {
    const { ns, sub } = c.req.param();
    authorize(c, svc, { verb: 'list', resource: 'silenced', namespace: ns });
    return send(c, ns, (x) => x.subscription === sub);
  });
  app.get('/namespaces/:ns/silenced/checks/:check', (c) => {
    const { ns, check } = c.req.param();
    authorize(c, svc, { verb: 'list', resource: 'silenced', namespace: ns });
    return send(c, ns, (x) => x.check === check);
  });
  app.get('/silenced/checks/:check', (c) => send(c, undefined, (x) => x.check === c.req.param('check')));
  return app;
}
