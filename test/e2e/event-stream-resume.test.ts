// suite-timeout: 180
import http from 'node:http';
import { connect, type NatsConnection } from 'nats';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { adminAuth, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh } from '../harness/api.ts';
import { SseParser } from '../harness/sse.ts';

// The live event stream resumes (docs/compatibility.md#live-event-stream-resumes), read with
// node:http against a real backend: a client that comes back with `Last-Event-ID` gets `resume`,
// then exactly the changes it missed (each key's latest, in revision order, filtered as the stream
// is), then live changes, none twice; an id older than the bucket's history, in the future or not a
// number gets `relist`. The bucket's bounds are read from the backend's own nats-server.

let backend: Backend;
let nc: NatsConnection | undefined;
const api = coreApi(() => backend);
const streams: Sse[] = [];

interface Msg {
  event: string;
  id?: string;
  json?: any;
}

/** One SSE response, parsed as it arrives. */
class Sse {
  readonly messages: Msg[] = [];
  private readonly parser = new SseParser();
  private constructor(private readonly req: http.ClientRequest) {}

  static open(path: string, lastEventId?: string): Promise<Sse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Accept: 'text/event-stream', ...adminAuth };
      if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
      const req = http.get(`${backend.apiUrl}${path}`, { headers, agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        const s = new Sse(req);
        streams.push(s);
        res.setEncoding('utf8');
        res.on('data', (d: string) => s.feed(d));
        res.on('error', () => {});
        resolve(s);
      });
      req.on('error', reject);
    });
  }

  private feed(chunk: string): void {
    for (const { event, id, data } of this.parser.feed(chunk))
      this.messages.push({ event, ...(id !== undefined ? { id } : {}), json: JSON.parse(data) });
  }

  /** Waits for `n` messages, then gives them all. */
  async first(n: number, what: string): Promise<Msg[]> {
    await waitFor(async () => this.messages.length >= n || undefined, { timeoutMs: 10_000, what });
    return this.messages;
  }

  close(): void {
    this.req.destroy();
  }
}

/** What a change message names: `put X/c` or `delete X/c`. */
const named = (m: Msg) =>
  m.event === 'put'
    ? `put ${m.json.entity.metadata.name}/${m.json.check.metadata.name}`
    : m.event === 'delete'
      ? `delete ${m.json.entity}/${m.json.check}`
      : m.event;

const post = async (ns: string, entity: string, check: string, status = 0) =>
  created(
    await api(`/namespaces/${ns}/events`, 'POST', {
      entity: { metadata: { name: entity }, entity_class: 'proxy' },
      check: { metadata: { name: check }, status, output: `status ${status}`, interval: 60 },
    }),
    `POST event ${entity}/${check}`,
  );
const remove = async (ns: string, entity: string, check: string) =>
  assert.is((await api(`/namespaces/${ns}/events/${entity}/${check}`, 'DELETE')).status, 204);

const streamOf = (ns: string, query = '') => `/api/core/v2/namespaces/${ns}/events/stream${query}`;

async function newNamespace(): Promise<string> {
  const ns = fresh('resume');
  created(await api('/namespaces', 'POST', { name: ns }), `namespace ${ns}`);
  return ns;
}

/** The event bucket's bounds, from nats-server itself. */
async function bucketBounds(): Promise<{ first: number; last: number }> {
  const info = await (await nc!.jetstreamManager()).streams.info('KV_monitor_events');
  return { first: info.state.first_seq, last: info.state.last_seq };
}

test.before(async () => {
  backend = await startBackend({ name: 'stream-resume' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10_000,
    what: 'the admin API key to work',
  });
  nc = await connect({ servers: backend.embedded!.natsListen });
});

test.after.each(() => {
  while (streams.length) streams.pop()!.close();
});
test.after(async () => {
  while (streams.length) streams.pop()!.close();
  await nc?.close();
  await backend?.stop();
});

test('a new stream opens with start, whose id resumes it', async () => {
  const ns = await newNamespace();
  const s = await Sse.open(streamOf(ns));
  const [start] = await s.first(1, 'the start');
  assert.is(start!.event, 'start');
  assert.match(start!.id!, /^\d+$/);
  assert.equal(start!.json, { revision: Number(start!.id) });
  s.close();
  // Nothing changed since: a resume from there replays nothing and goes live.
  const again = await Sse.open(streamOf(ns), start!.id);
  const [head] = await again.first(1, 'the resume');
  assert.is(head!.event, 'resume');
  assert.is(head!.id, start!.id);
  await post(ns, 'late', 'c');
  const msgs = await again.first(2, 'the live put');
  assert.equal(msgs.map(named), ['resume', 'put late/c']);
});

test('a client back with Last-Event-ID gets exactly what it missed, in order, then live, nothing twice', async () => {
  const ns = await newNamespace();
  await post(ns, 'x', 'c1');
  await post(ns, 'y', 'c1');
  const before = await Sse.open(streamOf(ns));
  await post(ns, 'seen', 'c1');
  const [, seen] = await before.first(2, 'a change seen before the disconnect');
  assert.is(named(seen!), 'put seen/c1');
  before.close();

  // While away: a new event, a changed one, a deleted one, one written twice (its latest counts).
  await post(ns, 'x', 'c2');
  await post(ns, 'y', 'c1', 1);
  await remove(ns, 'x', 'c1');
  await post(ns, 'z', 'c1', 1);
  await post(ns, 'z', 'c1', 2);

  const back = await Sse.open(streamOf(ns), seen!.id);
  await post(ns, 'w', 'c1'); // live, possibly while the replay is being read
  const msgs = await back.first(6, 'the replay and the live change');
  await new Promise((r) => setTimeout(r, 500)); // anything sent twice would be here by now
  assert.equal(back.messages.map(named), [
    'resume',
    'put x/c2',
    'put y/c1',
    'delete x/c1',
    'put z/c1',
    'put w/c1',
  ]);
  assert.equal(msgs[0]!.json, { revision: Number(seen!.id) });
  assert.is(msgs[0]!.id, seen!.id);
  assert.is(msgs[2]!.json.check.status, 1, 'the changed event as it is now');
  assert.is(msgs[4]!.json.check.status, 2, 'the event written twice: its latest write');
  const ids = msgs.slice(1).map((m) => Number(m.id));
  assert.ok(
    ids.every((id, i) => id > Number(seen!.id) && (i === 0 || id > ids[i - 1]!)),
    `ids grow: ${ids}`,
  );
});

test('a resumed stream replays only what its filter lets through', async () => {
  const ns = await newNamespace();
  const s = await Sse.open(streamOf(ns, '?entity=kept'));
  const [start] = await s.first(1, 'the start');
  s.close();
  await post(ns, 'other', 'c');
  await post(ns, 'kept', 'c');
  await post(ns, 'other', 'd');
  const back = await Sse.open(streamOf(ns, '?entity=kept'), start!.id);
  await back.first(2, 'the replay');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(back.messages.map(named), ['resume', 'put kept/c']);
});

test('an id older than the history kept gets relist, then live changes', async () => {
  const ns = await newNamespace();
  // Writing again the key of the oldest entry drops that entry (one per key): the oldest kept
  // revision moves past the revisions before it.
  const jsm = await nc!.jetstreamManager();
  const oldest = await jsm.streams.getMessage('KV_monitor_events', { seq: (await bucketBounds()).first });
  const [eventNs, entity, check] = oldest.subject.split('.').slice(2) as [string, string, string];
  await post(eventNs, entity, check, 1);
  const { first } = await bucketBounds();
  assert.ok(first >= 2, `the bucket dropped its oldest writes (first ${first})`);
  const tooOld = String(first - 2);
  const s = await Sse.open(streamOf(ns), tooOld);
  const [head] = await s.first(1, 'the relist');
  assert.is(head!.event, 'relist');
  assert.match(head!.json.message, new RegExp(`revision ${tooOld} is older than the history kept`));
  assert.match(head!.json.message, /list again/);
  assert.is(head!.json.revision, Number(head!.id), 'its id is where the stream goes on from');
  await post(ns, 'after', 'c');
  const msgs = await s.first(2, 'a live change after the relist');
  assert.equal(msgs.map(named), ['relist', 'put after/c']);
});

test('an id that is not a revision, or from the future, gets relist', async () => {
  const ns = await newNamespace();
  const { last } = await bucketBounds();
  for (const [id, says] of [
    ['abc', /"abc" is not a revision/],
    ['-3', /is not a revision/],
    [String(last + 1_000_000), /is not one of the event stream/],
  ] as const) {
    const s = await Sse.open(streamOf(ns), id);
    const [head] = await s.first(1, `the answer to ${id}`);
    assert.is(head!.event, 'relist', id);
    assert.match(head!.json.message, says);
    s.close();
  }
});

test.run();
