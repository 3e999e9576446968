// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { decodeFrame, encodeFrame } from '../../proto/frames.ts';
import { protobufCodec } from '../../proto/wire/codec.ts';
import { coreApi, created, isError } from '../harness/api.ts';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  startAgent,
  startBackend,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// One backend with --entity-limit 3 and a default deregistration handler, and real agents:
// redaction of entities and events in REST answers, the stored entity pushed to its agent
// (entity_config), deregistration of an agent that stops with --deregister (entity and events gone,
// its deregistration and resolutions handled), and the entity limit (402 at the handshake and through the
// API).

const LIMIT = 3;
let backend: Backend;
const agents: AgentProc[] = [];
const api = coreApi(() => backend);

const entityOf = async (name: string) => await api(`/namespaces/default/entities/${name}`);
const waitEntity = (name: string) =>
  waitFor(
    async () => {
      const r = await entityOf(name);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 20000, what: `entity ${name}` },
  );
const listed = async (path: string, name: string) =>
  (await api(path)).body.find((x: any) => (x.entity?.metadata?.name ?? x.metadata?.name) === name);
const agentCount = async () => (await api('/namespaces/default/entities')).body.length as number;

let handlerRoot: string;
/** A pipe handler writing each event it gets to a file of its own; returns its directory. */
async function fileHandler(name: string): Promise<string> {
  const dir = join(handlerRoot, name);
  mkdirSync(dir, { recursive: true });
  const r = await api(`/namespaces/default/handlers/${name}`, 'PUT', {
    metadata: { name, namespace: 'default' },
    type: 'pipe',
    command: `cat > "$(mktemp -p ${dir} ev.XXXXXX)"`,
  });
  assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
  return dir;
}
/** The events a file handler got so far. */
const handled = (dir: string): any[] =>
  readdirSync(dir).flatMap((f) => {
    try {
      return [JSON.parse(readFileSync(join(dir, f), 'utf8'))];
    } catch {
      return [];
    }
  });

async function launch(name: string, extraArgs: string[] = []): Promise<AgentProc> {
  const a = await startAgent({
    name,
    backendUrls: [backend.agentUrl],
    subscriptions: ['linux'],
    keepaliveInterval: 1,
    warning: 5,
    extraArgs,
  });
  agents.push(a);
  return a;
}

test.before(async () => {
  handlerRoot = tempDir('lifecycle-handlers');
  backend = await startBackend({
    name: 'lifecycle-1',
    extraArgs: ['--deregistration-handler', 'dereg-default'],
    env: { MONITOR_ENTITY_LIMIT: String(LIMIT) },
  });
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  await backend?.stop();
});

test('REST answers redact entity secrets; the store keeps them', async () => {
  const entity = {
    metadata: {
      name: 'secretive',
      namespace: 'default',
      labels: { region: 'eu', password: 'hunter2' },
      annotations: { API_KEY: 'abc', note: 'kept' },
    },
    entity_class: 'proxy',
    system: { hostname: 'h', extra: { nested: { secret: 's', keep: 'yes' } } },
  };
  created(await api('/namespaces/default/entities', 'POST', entity), 'create entity');
  const one = (await entityOf('secretive')).body;
  assert.is(one.metadata.labels.password, 'REDACTED');
  assert.is(one.metadata.labels.region, 'eu');
  assert.is(one.metadata.annotations.API_KEY, 'REDACTED');
  assert.is(one.metadata.annotations.note, 'kept');
  assert.is(one.system.extra.nested.secret, 'REDACTED');
  assert.is(one.system.extra.nested.keep, 'yes');

  const inList = await waitFor(() => listed('/namespaces/default/entities', 'secretive'), {
    timeoutMs: 5000,
    what: 'listed entity',
  });
  assert.is(inList.metadata.labels.password, 'REDACTED');
  assert.is(inList.system.extra.nested.secret, 'REDACTED');
  const allNs = await listed('/entities', 'secretive');
  assert.is(allNs.metadata.annotations.API_KEY, 'REDACTED');

  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: 'secretive' } },
      check: { metadata: { name: 'disk' }, status: 0, output: 'ok' },
    }),
    'event',
  );
  const ev = (await api('/namespaces/default/events/secretive/disk')).body;
  assert.is(ev.entity.metadata.labels.password, 'REDACTED');
  assert.is(ev.check.output, 'ok');
  const evListed = await waitFor(() => listed('/namespaces/default/events/secretive', 'secretive'), {
    timeoutMs: 5000,
    what: 'listed event',
  });
  assert.is(evListed.entity.metadata.annotations.API_KEY, 'REDACTED');

  // A custom redact list replaces the default one; a PATCH with the ETag of the shown entity works.
  const got = await entityOf('secretive');
  const patched = await api(
    '/namespaces/default/entities/secretive',
    'PATCH',
    { redact: ['region'] },
    { 'If-Match': got.headers.get('etag')! },
  );
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.is(patched.body.metadata.labels.region, 'REDACTED');
  assert.is(patched.body.metadata.labels.password, 'hunter2');
  // The backend log never shows the secret.
  assert.not.ok(
    backend.logs().some((l) => JSON.stringify(l).includes('"abc"')),
    'a redacted value was logged',
  );
});

test('the agent gets its stored entity and adopts API updates pushed to it', async () => {
  const a = await launch('cfg-agent');
  await waitEntity('cfg-agent');
  await a.proc.waitForLine(
    (l) => l.includes('backend stores no entity') || l.includes('entity config applied'),
    10000,
  );
  const cur = await entityOf('cfg-agent');
  const res = await api(
    '/namespaces/default/entities/cfg-agent',
    'PATCH',
    { metadata: { labels: { team: 'ops' } }, subscriptions: ['linux', 'db'] },
    { 'If-Match': cur.headers.get('etag')! },
  );
  assert.is(res.status, 200, JSON.stringify(res.body));
  await a.proc.waitForLine((l) => l.includes('entity config applied') && l.includes('"db"'), 10000);
  // Several keepalives later (1 s interval) the agent still reports what the API set.
  await new Promise((r) => setTimeout(r, 3000));
  const e = (await entityOf('cfg-agent')).body;
  assert.is(e.metadata.labels.team, 'ops');
  assert.ok(e.subscriptions.includes('db'), `subscriptions ${e.subscriptions}`);
  const ka = (await api('/namespaces/default/events/cfg-agent/keepalive')).body;
  assert.is(ka.entity.metadata.labels.team, 'ops');

  // A restart (whose first keepalive leaves before entity_config arrives) keeps what the API set.
  await a.stop();
  agents.splice(agents.indexOf(a), 1);
  const again = await launch('cfg-agent');
  await again.proc.waitForLine((l) => l.includes('entity config applied') && l.includes('"db"'), 10000);
  await new Promise((r) => setTimeout(r, 2500));
  const after = (await entityOf('cfg-agent')).body;
  assert.is(after.metadata.labels.team, 'ops');
  assert.ok(after.subscriptions.includes('db'));
});

test('an agent stopping with --deregister is deregistered: entity and events gone, its handlers told', async () => {
  const own = await fileHandler('dereg-own');
  const pager = await fileHandler('pager');
  const a = await launch('leaving-agent', ['--deregister', '--deregistration-handler', 'dereg-own']);
  await waitEntity('leaving-agent');
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: 'leaving-agent' } },
      check: { metadata: { name: 'cpu' }, status: 1, output: 'hot', handlers: ['pager'] },
    }),
    'event',
  );
  await a.stop();
  await waitFor(async () => ((await entityOf('leaving-agent')).status === 404 ? true : undefined), {
    timeoutMs: 10000,
    what: 'entity deleted',
  });
  assert.is((await api('/namespaces/default/events/leaving-agent/cpu')).status, 404);
  assert.is((await api('/namespaces/default/events/leaving-agent/keepalive')).status, 404);
  await waitFor(
    async () =>
      (await api('/namespaces/default/events/leaving-agent')).body.length === 0 ? true : undefined,
    { timeoutMs: 5000, what: 'events unlisted' },
  );

  const ev = await waitFor(() => handled(own).find((e) => e.entity?.metadata?.name === 'leaving-agent'), {
    timeoutMs: 10000,
    what: 'deregistration event handled',
  });
  assert.is(ev.check.metadata.name, 'deregistration');
  assert.is(ev.check.status, 1);
  assert.equal(ev.check.handlers, ['dereg-own']);
  assert.match(ev.check.output, /leaving-agent was deregistered/);
  assert.ok(
    backend.logs().some((l) => l.msg === 'entity deregistered' && l.entity === 'leaving-agent'),
    'deregistration logged',
  );
  // Its events go to their handlers resolved (docs/compatibility.md#registration-and-deregistration).
  const resolved = await waitFor(
    () => handled(pager).find((e) => e.entity?.metadata?.name === 'leaving-agent' && e.check.status === 0),
    { timeoutMs: 10000, what: 'resolution handled' },
  );
  assert.is(resolved.check.metadata.name, 'cpu');
  assert.is(resolved.check.output, 'Resolving due to entity deregistering');
  assert.equal(resolved.check.history, []);
});

test('an agent with --deregister that goes silent is deregistered at the warning timeout', async () => {
  const dflt = await fileHandler('dereg-default');
  const a = await launch('vanishing-agent', ['--deregister']);
  await waitEntity('vanishing-agent');
  await a.kill('SIGKILL');
  await waitFor(async () => ((await entityOf('vanishing-agent')).status === 404 ? true : undefined), {
    timeoutMs: 20000,
    what: 'silent entity deleted',
  });
  // The agent named no handler: the backend's default one.
  const ev = await waitFor(() => handled(dflt).find((e) => e.entity?.metadata?.name === 'vanishing-agent'), {
    timeoutMs: 10000,
    what: 'deregistration of the silent agent handled',
  });
  assert.equal(ev.check.handlers, ['dereg-default']);
  assert.match(ev.check.output, /keepalive timeout/);
});

test('an agent speaking protobuf registers, sends events that are stored and acknowledged, and gets entity_config', async () => {
  const a = await launch('proto-agent', ['--protobuf', '--deregister', '--labels', '{"wire":"protobuf"}']);
  const e = await waitEntity('proto-agent');
  assert.is(e.metadata.labels.wire, 'protobuf');
  assert.ok(
    backend
      .logs()
      .some(
        (l) =>
          l.msg === 'agent connected' &&
          l.agent === 'proto-agent' &&
          l.encoding === 'application/octet-stream',
      ),
    'the session speaks protobuf',
  );
  assert.ok(
    backend
      .logs()
      .some(
        (l) => l.msg === 'agent connected' && l.agent === 'cfg-agent' && l.encoding === 'application/json',
      ),
    'a JSON agent stays on JSON',
  );
  assert.is(e.system.hostname.length > 0, true);
  await a.proc.waitForLine(
    (l) => l.includes('backend stores no entity') || l.includes('entity config applied'),
    10000,
  );
  const ka = await waitFor(
    async () => {
      const r = await api('/namespaces/default/events/proto-agent/keepalive');
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 10000, what: 'keepalive' },
  );
  assert.is(ka.check.status, 0);
  const posted = await fetch(`${a.apiUrl}/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ check: { metadata: { name: 'via-proto' }, status: 2, output: 'binary\nwire' } }),
  });
  assert.is(posted.status, 202);
  const ev = await waitFor(
    async () => {
      const r = await api('/namespaces/default/events/proto-agent/via-proto');
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 10000, what: 'event over protobuf' },
  );
  assert.is(ev.check.status, 2);
  assert.is(ev.check.output, 'binary\nwire');
  assert.is(ev.entity.metadata.name, 'proto-agent');
  assert.ok(!a.proc.lines().some((l) => l.includes('malformed')), 'no malformed frame either way');
  // An API update reaches it re-encoded as protobuf.
  const cur = await entityOf('proto-agent');
  const res = await api(
    '/namespaces/default/entities/proto-agent',
    'PATCH',
    { metadata: { labels: { wire: 'pb2' } } },
    { 'If-Match': cur.headers.get('etag')! },
  );
  assert.is(res.status, 200);
  await a.proc.waitForLine((l) => l.includes('entity config applied'), 10000);
  await new Promise((r) => setTimeout(r, 2500));
  assert.is((await entityOf('proto-agent')).body.metadata.labels.wire, 'pb2');
  // Leaves with --deregister so the entity count is as before.
  await a.stop();
  await waitFor(async () => ((await entityOf('proto-agent')).status === 404 ? true : undefined), {
    timeoutMs: 10000,
    what: 'protobuf agent deregistered',
  });
});

test('a raw protobuf peer: both encodings offered, entity_config in protobuf, garbage closes with 1007', async () => {
  const ws = new WebSocket(backend.agentUrl, {
    headers: {
      'Monitor-Namespace': 'default',
      'Monitor-AgentName': 'raw-peer',
      'Monitor-User': 'agent',
      Authorization: 'Basic ' + Buffer.from('agent:P@ssw0rd!').toString('base64'),
      Accept: 'application/octet-stream',
    },
  });
  const upgrade = new Promise<Record<string, unknown>>((resolve) =>
    ws.once('upgrade', (res) => resolve(res.headers)),
  );
  const first = new Promise<Buffer>((resolve) => ws.once('message', (d) => resolve(d as Buffer)));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const headers = await upgrade;
  assert.is(headers['content-type'], 'application/octet-stream');
  assert.match(String(headers.accept), /application\/octet-stream.*application\/json/);
  const frame = decodeFrame(await first);
  assert.is(frame.type, 'entity_config');
  assert.equal(protobufCodec.decode(frame.payload, 'entity_config'), { metadata: { name: 'not found' } });
  ws.send(encodeFrame('keepalive', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])));
  assert.is(await closed, 1007);
  assert.is((await backend.health()).status, 200);
  assert.is((await entityOf('raw-peer')).status, 404);
});

test('past the entity limit new agents get 402 and new entities a licence message; existing ones go on', async () => {
  // secretive + cfg-agent exist; one more fills the cluster.
  created(
    await api('/namespaces/default/entities', 'POST', {
      metadata: { name: 'filler' },
      entity_class: 'proxy',
    }),
    'filler',
  );
  await waitFor(async () => ((await agentCount()) >= LIMIT ? true : undefined), {
    timeoutMs: 5000,
    what: 'read model count',
  });

  const refused = await api('/namespaces/default/entities', 'POST', {
    metadata: { name: 'one-too-many' },
    entity_class: 'proxy',
  });
  isError(refused, 402, 'create past the limit');
  assert.match(refused.body.message, /valid license with a sufficient entity limit is required/);
  isError(
    await api('/namespaces/default/entities/one-too-many', 'PUT', { metadata: { name: 'one-too-many' } }),
    402,
    'PUT past the limit',
  );
  const ev = await api('/namespaces/default/events', 'POST', {
    entity: { metadata: { name: 'proxy-new' } },
    check: { metadata: { name: 'ping' }, status: 0 },
  });
  isError(ev, 402, 'event creating a proxy past the limit');
  // Existing entities are still writable.
  const again = await api('/namespaces/default/entities/filler', 'PUT', {
    metadata: { name: 'filler', labels: { x: '1' } },
    entity_class: 'proxy',
  });
  assert.is(again.status, 201, JSON.stringify(again.body));
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: 'filler' } },
      check: { metadata: { name: 'ping' }, status: 0 },
    }),
    'event of an existing entity',
  );

  const over = await launch('over-agent');
  const line = await over.proc.waitForLine((l) => l.includes('402'), 15000);
  assert.match(line, /valid license with a sufficient entity limit is required/);
  assert.is((await entityOf('over-agent')).status, 404);

  // An agent's event naming a new proxy entity is refused for good (the agent drops it).
  const cfg = agents.find((x) => x.name === 'cfg-agent')!;
  const from = cfg.proc.lineCount;
  const posted = await fetch(`${cfg.apiUrl}/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      check: { metadata: { name: 'ping' }, status: 0, proxy_entity_name: 'proxy-over' },
    }),
  });
  assert.is(posted.status, 202);
  await cfg.proc.waitForLine((l) => l.includes('payment_required'), 10000, { fromLine: from });
  assert.is((await entityOf('proxy-over')).status, 404);

  // The existing agent keeps connecting and sending keepalives.
  const before = (await entityOf('cfg-agent')).body.last_seen;
  await waitFor(async () => ((await entityOf('cfg-agent')).body.last_seen > before ? true : undefined), {
    timeoutMs: 5000,
    what: 'existing agent keepalive',
  });
});

test.run();
