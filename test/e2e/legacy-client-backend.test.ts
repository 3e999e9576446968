// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { coreApi, fresh } from '../harness/api.ts';
import { handledIn, legacyApi } from '../harness/legacy.ts';
import {
  freePort,
  sleep,
  startBackend,
  startLegacyClient,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// The backend's side of legacy clients, driven with raw agent frames (a legacy client is an agent
// whose entity carries `legacy`) and through the legacy API: signatures, keepalive judging and its
// texts, registration and deregistration from the client's scopes, legacy result processing, and the
// cloudvm removal against a real local HTTP endpoint.

let backend: Backend;
let root: string;
let vmServer: Server;
const vmRequests: string[] = [];
const sockets: WebSocket[] = [];
const agents: AgentProc[] = [];
const api = coreApi(() => backend);
const legacy = legacyApi(() => backend);

const SECRET_KEY = 'cloudvm-secret-9f3b1c';
const SIGNATURE = 'sig-7d2e0a-correct';

/** Instance states the fake endpoint answers, by `<region>/<instance>`; `hang` never answers. */
const vmStates: Record<string, string> = {
  'eu-west-1/i-gone': 'terminated',
  'us-east-1/vm-running': 'running',
  'us-east-1/vm-slow': 'hang',
};

async function fileHandler(name: string): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const r = await api(`/namespaces/default/handlers/${name}`, 'PUT', {
    metadata: { name, namespace: 'default' },
    type: 'pipe',
    command: `cat > "$(mktemp -p ${dir} ev.XXXXXX)"`,
  });
  assert.ok(r.status === 201 || r.status === 200, `handler ${name}: ${r.status}`);
  return dir;
}

const waitHandled = (dir: string, pred: (e: any) => boolean, what: string, timeoutMs = 15000) =>
  waitFor(() => handledIn(dir).find(pred), { timeoutMs, what });

/** A raw agent session: frames in, acknowledgements collected by event id. */
interface RawAgent {
  ws: WebSocket;
  acks: Map<string, any>;
}

async function connect(name: string): Promise<RawAgent> {
  const ws = new WebSocket(backend.agentUrl, {
    headers: {
      'Monitor-Namespace': 'default',
      'Monitor-AgentName': name,
      'Monitor-Subscriptions': `client:${name}`,
      Authorization: `Basic ${Buffer.from('agent:P@ssw0rd!').toString('base64')}`,
    },
  });
  sockets.push(ws);
  const acks = new Map<string, any>();
  ws.on('message', (data) => {
    const text = data.toString();
    const nl = text.indexOf('\n');
    if (text.slice(0, nl) !== 'ack') return;
    const a = JSON.parse(text.slice(nl + 1));
    acks.set(a.id, a);
  });
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_q, res) => reject(new Error(`handshake ${res.statusCode}`)));
  });
  return { ws, acks };
}

const send = (a: RawAgent, type: string, payload: unknown) =>
  a.ws.send(Buffer.from(`${type}\n${JSON.stringify(payload)}`));

interface ClientOpts {
  legacy?: Record<string, unknown>;
  signature?: string;
  handlers?: string[];
  warning?: number;
  critical?: number;
  deregister?: boolean;
}

const entityOf = (name: string, o: ClientOpts) => ({
  metadata: { name, namespace: 'default' },
  entity_class: 'agent',
  subscriptions: [`client:${name}`],
  ...(o.deregister ? { deregister: true } : {}),
  legacy: { address: '10.0.0.9', ...o.legacy },
});

function keepalive(a: RawAgent, name: string, o: ClientOpts = {}): void {
  send(a, 'keepalive', {
    timestamp: Math.floor(Date.now() / 1000),
    id: randomUUID(),
    entity: entityOf(name, o),
    check: {
      metadata: { name: 'keepalive' },
      interval: 1,
      timeout: o.warning ?? 120,
      ttl: o.critical ?? 180,
      handlers: o.handlers ?? [],
    },
    ...(o.signature === undefined ? {} : { signature: o.signature }),
  });
}

/** Sends a result; resolves with its acknowledgement. */
async function result(a: RawAgent, name: string, check: Record<string, unknown>, o: ClientOpts = {}) {
  const id = randomUUID();
  send(a, 'event', {
    id,
    timestamp: Math.floor(Date.now() / 1000),
    entity: entityOf(name, o),
    check: { status: 0, output: 'ok', ...check, metadata: { name: check.name } },
    ...(o.signature === undefined ? {} : { signature: o.signature }),
  });
  return waitFor(() => a.acks.get(id), { timeoutMs: 10000, what: `ack of ${String(check.name)}` });
}

const coreEvent = async (entity: string, check: string) => {
  const r = await api(`/namespaces/default/events/${entity}/${check}`);
  return r.status === 200 ? r.body : undefined;
};
const waitCoreEvent = (entity: string, check: string, pred: (e: any) => boolean, timeoutMs = 15000) =>
  waitFor(
    async () => {
      const e = await coreEvent(entity, check);
      return e && pred(e) ? e : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `${entity}/${check}` },
  );
const waitClient = (name: string, status: number) =>
  waitFor(async () => (await legacy(`/clients/${name}`)).status === status, {
    timeoutMs: 20000,
    intervalMs: 100,
    what: `GET /clients/${name} ${status}`,
  });
const logsWith = (msg: string, entity: string) =>
  backend.logs().filter((l) => l.msg === msg && l.entity === entity);

test.before(async () => {
  root = tempDir('legacy-client-backend');
  const vmPort = await freePort();
  vmServer = createServer((req: IncomingMessage, res) => {
    const path = (req.url ?? '').replace(/^\/states\//, '');
    vmRequests.push(decodeURIComponent(path));
    const state = vmStates[decodeURIComponent(path)];
    if (state === 'hang') return;
    if (!state) {
      res.writeHead(500).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ state }));
  });
  await new Promise<void>((r) => vmServer.listen(vmPort, '127.0.0.1', () => r()));
  backend = await startBackend({
    name: 'legacy-client-backend',
    extraArgs: ['--legacy-cloudvm-url', `http://127.0.0.1:${vmPort}/states/`],
  });
});
test.after(async () => {
  for (const ws of sockets) ws.terminate();
  await Promise.all(agents.map((a) => a.stop()));
  vmServer?.closeAllConnections();
  await new Promise((r) => vmServer?.close(r));
  await backend?.stop();
});

test('signatures: a forged keepalive and a forged result are dropped and logged, correct ones pass', async () => {
  const name = fresh('signed');
  const a = await connect(name);
  keepalive(a, name, { signature: SIGNATURE, legacy: { env: 'prod' } });
  await waitClient(name, 200);
  // A forged keepalive would change the client; it never reaches the registry.
  keepalive(a, name, { signature: 'forged', legacy: { env: 'forged' } });
  await waitFor(() => logsWith('invalid client signature', name).length > 0, {
    timeoutMs: 5000,
    what: 'keepalive refusal logged',
  });
  keepalive(a, name, { legacy: { env: 'unsigned' } });
  await waitFor(() => logsWith('invalid client signature', name).length > 1, {
    timeoutMs: 5000,
    what: 'unsigned keepalive refusal logged',
  });
  assert.is((await legacy(`/clients/${name}`)).body.env, 'prod');

  const forged = await result(a, name, { name: 'forged-check', status: 2 }, { signature: 'forged' });
  assert.equal(forged, {
    id: forged.id,
    ok: false,
    code: 'invalid',
    message: 'invalid check result signature',
  });
  const unsigned = await result(a, name, { name: 'forged-check', status: 2 });
  assert.is(unsigned.ok, false, 'a result without the signature is refused too');
  assert.ok(logsWith('invalid check result signature', name).length >= 2, 'result refusals logged');
  assert.is((await legacy(`/results/${name}/forged-check`)).status, 404, 'not stored');

  const good = await result(a, name, { name: 'good-check', status: 1 }, { signature: SIGNATURE });
  assert.is(good.ok, true);
  await waitCoreEvent(name, 'good-check', (e) => e.check.status === 1);
  keepalive(a, name, { signature: SIGNATURE, legacy: { env: 'staging' } });
  await waitFor(async () => (await legacy(`/clients/${name}`)).body.env === 'staging', {
    timeoutMs: 5000,
    what: 'a correctly signed keepalive updates the client',
  });

  const client = (await legacy(`/clients/${name}`)).body;
  assert.is(client.signature, undefined, 'the signature is not in the client');
  const ev = await coreEvent(name, 'good-check');
  assert.not.ok(JSON.stringify(ev).includes(SIGNATURE), 'nor in its events');
  assert.not.ok(JSON.stringify(backend.logs()).includes(SIGNATURE), 'nor in the logs');
  // The actor keeps a digest: the signature itself is in no file of the stores (NATS and etcd data).
  const files = readdirSync(backend.stateDir, { recursive: true, withFileTypes: true }).filter((d) =>
    d.isFile(),
  );
  assert.ok(files.length > 0, 'the state dir holds the stores');
  for (const f of files)
    assert.not.ok(
      readFileSync(join(f.parentPath ?? f.path, f.name)).includes(SIGNATURE),
      `the signature is stored in ${f.name}`,
    );
});

test('signatures: a client without one adopts one later; deleting the client forgets it', async () => {
  const name = fresh('adopt');
  const a = await connect(name);
  keepalive(a, name);
  await waitClient(name, 200);
  assert.is((await result(a, name, { name: 'c' })).ok, true, 'unsigned client: unsigned results pass');
  keepalive(a, name, { signature: 'first' });
  await sleep(300);
  assert.is((await result(a, name, { name: 'c' })).ok, false, 'adopted: unsigned results refused');
  assert.is((await result(a, name, { name: 'c' }, { signature: 'first' })).ok, true);
  assert.is((await legacy(`/clients/${name}`, 'DELETE')).status, 202);
  await waitClient(name, 404);
  keepalive(a, name, { signature: 'second', legacy: { env: 'again' } });
  await waitFor(async () => (await legacy(`/clients/${name}`)).body?.env === 'again', {
    timeoutMs: 5000,
    what: 'a new signature is accepted after the deletion',
  });
});

test('keepalive judging: legacy texts, warning then critical; keepalives:false is never judged', async () => {
  const name = fresh('ka');
  const off = fresh('ka-off');
  const a = await connect(name);
  const b = await connect(off);
  keepalive(a, name, { warning: 5, critical: 8 });
  keepalive(b, off, { warning: 5, critical: 8, legacy: { keepalives: false } });
  const ok = await waitCoreEvent(name, 'keepalive', () => true);
  assert.match(ok.check.output, /^Keepalive sent from client \d+ seconds ago$/);
  assert.is(ok.check.status, 0);
  const warn = await waitCoreEvent(name, 'keepalive', (e) => e.check.status === 1, 12000);
  assert.match(warn.check.output, /^No keepalive sent from client for [5-7] seconds \(>=5\)$/);
  const crit = await waitCoreEvent(name, 'keepalive', (e) => e.check.status === 2, 12000);
  assert.match(crit.check.output, /^No keepalive sent from client for (8|9|10) seconds \(>=8\)$/);
  const legacyEv = await legacy(`/events/${name}/keepalive`);
  assert.is(legacyEv.status, 200);
  assert.is(legacyEv.body.check.status, 2);
  assert.is((await legacy(`/clients/${off}`)).status, 200, 'the unmonitored client is registered');
  assert.is(await coreEvent(off, 'keepalive'), undefined, 'and has no keepalive event at all');
});

test('registration: the registration scope merged into the event, for the registration handler', async () => {
  const dir = await fileHandler('registration');
  const name = fresh('reg');
  const a = await connect(name);
  keepalive(a, name, { legacy: { registration: { team: 'ops', status: 2 } } });
  const ev = await waitHandled(dir, (e) => e.entity?.metadata?.name === name, 'registration handled');
  assert.is(ev.check.metadata.name, 'registration');
  assert.is(ev.check.output, 'new client registration');
  assert.is(ev.check.status, 2);
  assert.is(ev.check.team, 'ops');
  assert.equal(ev.check.handlers, ['registration']);
  assert.is(await coreEvent(name, 'registration'), undefined, 'not stored');
});

test('deregistration: a stopping legacy client is removed and its event reaches its handler', async () => {
  const dir = await fileHandler('dereg-file');
  const name = fresh('dereg');
  const a = await connect(name);
  const o = {
    deregister: true,
    legacy: { deregister: true, deregistration: { handler: 'dereg-file', team: 'ops', output: 'x' } },
  };
  keepalive(a, name, o);
  await waitClient(name, 200);
  a.ws.close(1000, 'deregister');
  await waitClient(name, 404);
  const ev = await waitHandled(dir, (e) => e.entity?.metadata?.name === name, 'deregistration handled');
  assert.is(ev.check.metadata.name, 'deregistration');
  assert.is(ev.check.output, 'client initiated deregistration');
  assert.is(ev.check.status, 1);
  assert.is(ev.check.team, 'ops');
  assert.equal(ev.check.handlers, ['dereg-file']);
  assert.ok(
    backend.logs().some((l) => l.msg === `deleted client ${name}`),
    'the built-in removal logged',
  );
});

test('legacy results through the legacy API: truncation, handle:false, total_state_change, ttl, aggregate', async () => {
  const dir = await fileHandler('legacy-results');
  const client = fresh('res');
  const long = `${'x'.repeat(300)}\nsecond line`;
  const post = (body: Record<string, unknown>) =>
    legacy('/results', 'POST', { source: client, handlers: ['legacy-results'], ...body });
  assert.is((await post({ name: 'trunc', output: long, status: 1, truncate_output: true })).status, 202);
  const handled = await waitHandled(
    dir,
    (e) => e.check.metadata.name === 'trunc',
    'truncated result handled',
  );
  assert.is(handled.check.output, long, 'handlers get the whole output');
  const stored = await waitCoreEvent(client, 'trunc', () => true);
  assert.is(stored.check.output, `${'x'.repeat(255)}\n...`, 'the stored output is truncated');

  assert.is((await post({ name: 'quiet', output: 'q', status: 2, handle: false })).status, 202);
  assert.is((await post({ name: 'loud', output: 'l', status: 2 })).status, 202);
  await waitHandled(dir, (e) => e.check.metadata.name === 'loud', 'control result handled');
  await waitCoreEvent(client, 'quiet', (e) => e.check.status === 2);
  await sleep(1000);
  assert.not.ok(
    handledIn(dir).some((e) => e.check.metadata.name === 'quiet'),
    'handle:false is not handled',
  );

  for (let i = 0; i < 21; i++) await post({ name: 'flappy', output: 'f', status: i % 2 });
  const flappy = await waitCoreEvent(client, 'flappy', (e) => e.check.history.length === 21);
  assert.is(flappy.check.total_state_change, 101, 'the legacy formula');

  assert.is((await post({ name: 'ttl-check', output: 't', status: 0, ttl: 5, ttl_status: 2 })).status, 202);
  const expired = await waitCoreEvent(client, 'ttl-check', (e) => e.check.status === 2, 15000);
  assert.match(expired.check.output, /^Last check execution was \d+ seconds ago$/);

  assert.is((await post({ name: 'agg-check', output: 'a', status: 1, aggregate: 'legacy-agg' })).status, 202);
  const agg = await waitFor(
    async () => {
      const r = await legacy(`/aggregates/legacy-agg`);
      return r.status === 200 && r.body.results.total >= 1 ? r.body : undefined;
    },
    { timeoutMs: 5000, what: 'aggregate' },
  );
  assert.is(agg.results.warning, 1);
  const view = await legacy(`/clients/${client}`);
  assert.is(view.body.keepalives, false, 'a client made by a legacy result is unmonitored');
});

test('a real legacy client: signed keepalives and results pass, a forgery does not; it deregisters when it stops', async () => {
  const dir = await fileHandler('dereg-real');
  const name = fresh('real');
  const client = await startLegacyClient({
    name,
    backendUrls: backend.agentUrl,
    client: {
      signature: SIGNATURE,
      deregister: true,
      deregistration: { handler: 'dereg-real', team: 'ops' },
      keepalive: { thresholds: { warning: 30, critical: 60 } },
    },
  });
  agents.push(client);
  await waitClient(name, 200);
  const r = await fetch(`${client.httpUrl}/results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'from-socket', output: 'signed', status: 1 }),
  });
  assert.is(r.status, 202);
  await waitCoreEvent(name, 'from-socket', (e) => e.check.status === 1);
  const forger = await connect(name);
  keepalive(forger, name, { signature: 'forged', legacy: { env: 'forged' } });
  const forged = await result(forger, name, { name: 'forged', status: 2 }, { signature: 'forged' });
  assert.is(forged.ok, false);
  await waitFor(() => logsWith('invalid client signature', name).length > 0, {
    timeoutMs: 5000,
    what: 'forged keepalive logged',
  });
  assert.is((await legacy(`/clients/${name}`)).body.env, undefined);
  forger.ws.terminate();
  await client.stop();
  await waitClient(name, 404);
  const ev = await waitHandled(dir, (e) => e.entity?.metadata?.name === name, 'deregistration handled');
  assert.is(ev.check.output, 'client initiated deregistration');
  assert.is(ev.check.team, 'ops');
  assert.not.ok(JSON.stringify(backend.logs()).includes(SIGNATURE), 'the signature is never logged');
});

test('cloudvm: a failing keepalive asks the endpoint; a gone instance removes the client', async () => {
  const gone = fresh('vm-gone');
  const running = 'vm-running';
  const slow = 'vm-slow';
  const scope = { access_key_id: 'AKIDEXAMPLE', secret_access_key: SECRET_KEY };
  const clients: Array<[string, Record<string, unknown>]> = [
    [
      gone,
      {
        ...scope,
        instance_id: 'i-gone',
        region: 'eu-west-1',
        allowed_instance_states: ['running', 'pending'],
      },
    ],
    [running, scope],
    [slow, { ...scope, timeout: 1 }],
  ];
  for (const [name, cloudvm] of clients) {
    const a = await connect(name);
    keepalive(a, name, { warning: 5, critical: 60, handlers: ['cloudvm'], legacy: { cloudvm } });
    await waitClient(name, 200);
  }
  await waitClient(gone, 404);
  assert.ok(vmRequests.includes('eu-west-1/i-gone'));
  await waitFor(
    () => vmRequests.includes('us-east-1/vm-running') && vmRequests.includes('us-east-1/vm-slow'),
    {
      timeoutMs: 10000,
      what: 'the other lookups',
    },
  );
  await waitFor(
    () => logsWith('cloudvm: the instance-state endpoint is unreachable: client kept', slow).length,
    {
      timeoutMs: 5000,
      what: 'the timeout logged',
    },
  );
  await sleep(500);
  assert.is((await legacy(`/clients/${running}`)).status, 200, 'a running instance keeps its client');
  assert.is((await legacy(`/clients/${slow}`)).status, 200, 'an endpoint that times out removes nothing');
  const leaks = backend.logs().filter((l) => JSON.stringify(l).includes(SECRET_KEY));
  assert.equal(
    leaks.map((l) => l.msg),
    [],
    'no credential in the logs',
  );
});

test.run();
