import { Hono, type Context } from 'hono';
import type { EventChange } from '../../../actors/entity/read-model.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import type { EventFeed } from '../event-feed.ts';
import { authorize } from '../http.ts';
import { EVENT_FIELDS } from '../selector-fields.ts';
import { eventLabels, selectorOf } from '../selectors.ts';
import { requireNamespace } from './config-resources.ts';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  // Proxies that buffer responses (nginx) would hold the messages back.
  'X-Accel-Buffering': 'no',
};

/**
 * Live streams of stored event changes over Server-Sent Events: `event: put` with the event
 * (entity redacted) or `event: delete` with `{namespace, entity, check}`, `id:` the KV revision.
 * Each stream opens with `start` (a new client lists, then follows), `resume` (the client's
 * `Last-Event-ID` was honoured: the changes it missed follow) or `relist` (it must list again);
 * docs/compatibility.md#live-event-stream-resumes.
 * Filters: `entity=`, `check=`, and label/field selectors (they see puts; a delete carries no event,
 * so it passes on namespace, entity and check alone).
 */
export function eventStreamRoutes(svc: ApiServices, feed: EventFeed): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  const stream = (c: Context<ApiEnv>, inNamespace: (ns: string) => boolean, where: string) => {
    const subject = c.get('subject');
    const entity = c.req.query('entity');
    const check = c.req.query('check');
    // Parsed now, so a bad selector is a 400 before the stream opens.
    const selected = selectorOf(c, EVENT_FIELDS, eventLabels);
    const accept = (change: EventChange, parsed: () => unknown) =>
      inNamespace(change.namespace) &&
      // Checked on every change: a role taken away ends what the stream shows at once.
      svc.authz.allowed(subject, { verb: 'list', resource: 'events', namespace: change.namespace }) &&
      (entity === undefined || change.entity === entity) &&
      (check === undefined || change.check === check) &&
      (change.op === 'delete' || !selected || selected(parsed()));
    const body = feed.open(
      { accept },
      { user: subject.username, namespace: where },
      c.req.header('Last-Event-ID'),
    );
    return c.body(body, 200, SSE_HEADERS);
  };

  app.get('/namespaces/:ns/events/stream', (c) => {
    const ns = c.req.param('ns');
    authorize(c, svc, { verb: 'list', resource: 'events', namespace: ns });
    requireNamespace(svc, ns);
    return stream(c, (n) => n === ns, ns);
  });

  app.get('/events/stream', (c) => stream(c, () => true, '*'));

  return app;
}
