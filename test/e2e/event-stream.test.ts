// suite-timeout: 240
import http from 'node:http';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  adminAuth,
  getJson,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { coreApi, created, fresh, isError } from '../harness/api.ts';
import { SseParser } from '../harness/sse.ts';

// The live stream of event changes (SSE) against a real backend and agent, read with node:http:
// puts and deletes as they are stored, an agent's keepalive, entity/check/selector filters, the
// namespace boundary, RBAC and 404s with JSON errors, redaction, and no server-side leak once the
// client goes (the open-stream gauge of /metrics back to 0).

let backend: Backend;
let agent: AgentProc | undefined;
const OTHER_NS = 'es-other';
const PW = 'stream-pass-123';
const api = coreApi(() => backend);
const streams: Sse[] = [];

interface Msg {
  event: string;
  id?: string;
  data: string;
  json?: any;
}

/** A reader of one SSE response: parses messages and comments as they arrive. */
class Sse {
  readonly messages: Msg[] = [];
  comments = 0;
  ended = false;
  private readonly parser = new SseParser();
  private constructor(
    readonly status: number,
    readonly headers: http.IncomingHttpHeaders,
    readonly body: string,
    private readonly req: http.ClientRequest,
  ) {}

  /** Opens `path`; for a non-200 answer the body is read whole. */
  static open(path: string, headers: Record<string, string> = adminAuth): Promise<Sse> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        `${backend.apiUrl}${path}`,
        { headers: { Accept: 'text/event-stream', ...headers }, agent: false },
        (res) => {
          res.setEncoding('utf8');
          if (res.statusCode !== 200) {
            let body = '';
            res.on('data', (d: string) => {
              body += d;
            });
            res.on('end', () => resolve(new Sse(res.statusCode ?? 0, res.headers, body, req)));
            return;
          }
          const s = new Sse(200, res.headers, '', req);
          streams.push(s);
          res.on('data', (d: string) => s.feed(d));
          res.on('end', () => {
            s.ended = true;
          });
          res.on('error', () => {
            s.ended = true;
          });
          resolve(s);
        },
      );
      req.on('error', reject);
    });
  }

  private feed(chunk: string): void {
    for (const { event, id, data } of this.parser.feed(chunk)) {
      const m: Msg = { event, data, ...(id !== undefined ? { id } : {}) };
      try {
        m.json = JSON.parse(data);
      } catch {
        /* not JSON */
      }
      this.messages.push(m);
    }
    this.comments = this.parser.comments;
  }

  /** The first message (from `from` on) that `ok` accepts. */
  next(ok: (m: Msg) => boolean, what: string, from = 0): Promise<Msg> {
    return waitFor(async () => this.messages.slice(from).find(ok), {
      timeoutMs: 10000,
      intervalMs: 25,
      what,
    });
  }

  close(): void {
    this.req.destroy();
  }
}

/** The changes a stream sent, without its opening `start` (docs/compatibility.md#live-event-stream-resumes). */
const changes = (s: Sse) => s.messages.filter((m) => m.event !== 'start');

const isPut =
  (entity: string, check: string, ns = 'default') =>
  (m: Msg) =>
    m.event === 'put' &&
    m.json?.entity?.metadata?.name === entity &&
    m.json?.check?.metadata?.name === check &&
    m.json?.metadata?.namespace === ns;
const isDelete =
  (entity: string, check: string, ns = 'default') =>
  (m: Msg) =>
    m.event === 'delete' && m.json?.entity === entity && m.json?.check === check && m.json?.namespace === ns;

const event = (entity: string, check: string, status = 0, entityExtra: object = {}) => ({
  entity: { metadata: { name: entity }, entity_class: 'proxy', ...entityExtra },
  check: { metadata: { name: check }, status, output: `status ${status}`, interval: 60 },
});
const post = async (ns: string, entity: string, check: string, status = 0, entityExtra: object = {}) =>
  created(
    await api(`/namespaces/${ns}/events`, 'POST', event(entity, check, status, entityExtra)),
    `POST event ${entity}/${check} in ${ns}`,
  );

const openStreams = async () => {
  const r = await getJson(`${backend.apiUrl}/metrics`);
  const m = /^monitor_api_event_streams_open (\d+)/m.exec(String(r.body));
  return m ? Number(m[1]) : -1;
};

let viewToken = '';
let noneToken = '';

test.before(async () => {
  backend = await startBackend({ name: 'event-stream' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  created(await api('/namespaces', 'POST', { name: OTHER_NS }), `namespace ${OTHER_NS}`);
  for (const u of ['s-view', 's-none'])
    created(await api('/users', 'POST', { username: u, password: PW, groups: [] }), `user ${u}`);
  created(
    await api('/namespaces/default/rolebindings', 'POST', {
      metadata: { name: 'rb-s-view' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 's-view' }],
    }),
    'rolebinding of s-view',
  );
  const login = async (u: string) => {
    const r = await getJson(`${backend.apiUrl}/auth`, {
      headers: { Authorization: `Basic ${Buffer.from(`${u}:${PW}`).toString('base64')}` },
    });
    if (r.status !== 200) throw new Error(`login of ${u}: ${r.status}`);
    return r.body.access_token as string;
  };
  viewToken = await login('s-view');
  noneToken = await login('s-none');
});

test.after.each(() => {
  while (streams.length) streams.pop()!.close();
});
test.after(async () => {
  while (streams.length) streams.pop()!.close();
  await agent?.stop();
  await backend?.stop();
});

test('a posted event is streamed as put with its KV revision; its delete as delete', async () => {
  const s = await Sse.open('/api/core/v2/namespaces/default/events/stream');
  assert.is(s.status, 200);
  assert.match(String(s.headers['content-type']), /^text\/event-stream/);
  await waitFor(async () => s.comments > 0 || undefined, { timeoutMs: 5000, what: 'the opening comment' });
  const entity = fresh('es-ent');
  await post('default', entity, 'disk', 1);
  const put = await s.next(isPut(entity, 'disk'), 'the put');
  assert.is(put.json.check.status, 1);
  assert.is(put.json.check.output, 'status 1');
  assert.match(put.id ?? '', /^\d+$/, `id is a KV revision: ${put.id}`);

  const del = await api(`/namespaces/default/events/${entity}/disk`, 'DELETE');
  assert.is(del.status, 204);
  const d = await s.next(isDelete(entity, 'disk'), 'the delete');
  assert.equal(d.json, { namespace: 'default', entity, check: 'disk' });
  assert.ok(Number(d.id) > Number(put.id), 'revisions grow');
});

test('the entity is redacted in a put', async () => {
  const s = await Sse.open('/api/core/v2/namespaces/default/events/stream');
  const entity = fresh('es-red');
  await post('default', entity, 'sec', 0, {
    metadata: { name: entity, labels: { password: 'hunter2', role: 'db' } },
  });
  const put = await s.next(isPut(entity, 'sec'), 'the put');
  assert.is(put.json.entity.metadata.labels.password, 'REDACTED');
  assert.is(put.json.entity.metadata.labels.role, 'db');
  assert.not.ok(put.data.includes('hunter2'), 'the secret never goes out');
});

test('filters: entity=, check=, labelSelector', async () => {
  const a = fresh('es-fa');
  const b = fresh('es-fb');
  const byEntity = await Sse.open(`/api/core/v2/namespaces/default/events/stream?entity=${a}`);
  const byCheck = await Sse.open('/api/core/v2/namespaces/default/events/stream?check=only-this');
  const byLabel = await Sse.open(
    `/api/core/v2/namespaces/default/events/stream?labelSelector=${encodeURIComponent('tier == gold')}`,
  );
  await post('default', b, 'other-check');
  await post('default', b, 'only-this');
  await post('default', a, 'other-check', 0, { metadata: { name: a, labels: { tier: 'gold' } } });
  await byEntity.next(isPut(a, 'other-check'), 'the put of entity a');
  await byCheck.next(isPut(b, 'only-this'), 'the put of check only-this');
  await byLabel.next(isPut(a, 'other-check'), 'the put with label tier=gold');
  // The stream delivers in store order: a later put seen means the earlier ones were judged.
  assert.not.ok(
    byEntity.messages.some((m) => m.json?.entity?.metadata?.name === b),
    'entity filter lets b through',
  );
  assert.ok(
    changes(byCheck).every((m) => m.json?.check?.metadata?.name === 'only-this'),
    'check filter lets others through',
  );
  assert.ok(
    changes(byLabel).every((m) => m.json?.entity?.metadata?.labels?.tier === 'gold'),
    'label selector lets others through',
  );
  const bad = await Sse.open(
    `/api/core/v2/namespaces/default/events/stream?labelSelector=${encodeURIComponent('tier ==')}`,
  );
  assert.is(bad.status, 400, bad.body);
});

test('another namespace stays out of a namespace stream; the all-namespaces stream sees both', async () => {
  const here = await Sse.open('/api/core/v2/namespaces/default/events/stream');
  const all = await Sse.open('/api/core/v2/events/stream');
  const e1 = fresh('es-other');
  const e2 = fresh('es-here');
  await post(OTHER_NS, e1, 'x');
  await post('default', e2, 'x');
  await here.next(isPut(e2, 'x'), 'the default put');
  await all.next(isPut(e1, 'x', OTHER_NS), 'the other namespace put on the all stream');
  await all.next(isPut(e2, 'x'), 'the default put on the all stream');
  assert.not.ok(
    here.messages.some((m) => m.json?.metadata?.namespace === OTHER_NS),
    'other namespace leaked',
  );
});

test('a user with view in default only: its all-namespaces stream shows default alone', async () => {
  const s = await Sse.open('/api/core/v2/events/stream', { Authorization: `Bearer ${viewToken}` });
  assert.is(s.status, 200, s.body);
  const e1 = fresh('es-v-other');
  const e2 = fresh('es-v-here');
  await post(OTHER_NS, e1, 'x');
  await post('default', e2, 'x');
  await s.next(isPut(e2, 'x'), 'the default put');
  assert.not.ok(
    s.messages.some((m) => m.json?.metadata?.namespace === OTHER_NS),
    'a namespace it may not list leaked',
  );
});

test('401 without credentials, 403 without permission, 404 for an unknown namespace, JSON errors', async () => {
  const parse = (s: Sse) => ({ status: s.status, body: JSON.parse(s.body), headers: new Headers() }) as any;
  isError(parse(await Sse.open('/api/core/v2/namespaces/default/events/stream', {})), 401, 'no credentials');
  isError(parse(await Sse.open('/api/core/v2/events/stream', {})), 401, 'no credentials, all namespaces');
  isError(
    parse(
      await Sse.open('/api/core/v2/namespaces/default/events/stream', {
        Authorization: `Bearer ${noneToken}`,
      }),
    ),
    403,
    'no binding',
  );
  isError(
    parse(
      await Sse.open(`/api/core/v2/namespaces/${OTHER_NS}/events/stream`, {
        Authorization: `Bearer ${viewToken}`,
      }),
    ),
    403,
    'view elsewhere',
  );
  isError(
    parse(await Sse.open('/api/core/v2/namespaces/no-such-ns/events/stream')),
    404,
    'unknown namespace',
  );
  // An all-namespaces stream of a user who may list nothing is empty, not refused (as the list is).
  const empty = await Sse.open('/api/core/v2/events/stream', { Authorization: `Bearer ${noneToken}` });
  assert.is(empty.status, 200);
  await post('default', fresh('es-none'), 'x');
  const marker = await Sse.open('/api/core/v2/events/stream');
  const e = fresh('es-none-marker');
  await post('default', e, 'x');
  await marker.next(isPut(e, 'x'), 'the marker put');
  await new Promise((r) => setTimeout(r, 200));
  assert.is(changes(empty).length, 0, 'a user without permission saw events');
});

test('an agent keepalive shows up on the stream', async () => {
  const s = await Sse.open('/api/core/v2/namespaces/default/events/stream?check=keepalive');
  const name = fresh('es-agent');
  agent = await startAgent({ name, backendUrls: [backend.agentUrl], keepaliveInterval: 1 });
  const k = await s.next(
    (m) => m.event === 'put' && m.json?.entity?.metadata?.name === name,
    'the keepalive',
  );
  assert.is(k.json.check.metadata.name, 'keepalive');
  assert.is(k.json.entity.entity_class, 'agent');
  await agent.stop();
  agent = undefined;
});

test('closing clients frees the server side: the open-stream gauge returns to 0', async () => {
  while (streams.length) streams.pop()!.close();
  await waitFor(async () => (await openStreams()) === 0 || undefined, {
    timeoutMs: 5000,
    what: 'no open streams',
  });
  const a = await Sse.open('/api/core/v2/namespaces/default/events/stream');
  const b = await Sse.open('/api/core/v2/events/stream');
  assert.is(await openStreams(), 2);
  a.close();
  b.close();
  await waitFor(async () => (await openStreams()) === 0 || undefined, {
    timeoutMs: 5000,
    what: 'the gauge back to 0 after the clients left',
  });
});

test('stopping the backend ends open streams', async () => {
  const s = await Sse.open('/api/core/v2/namespaces/default/events/stream');
  await backend.stop();
  await waitFor(async () => s.ended || undefined, { timeoutMs: 10000, what: 'the stream to end' });
});

test.run();
