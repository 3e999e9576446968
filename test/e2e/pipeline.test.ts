// suite-timeout: 300
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { coreApi, created, fresh, isError } from '../harness/api.ts';
import { pipelineKit } from '../harness/pipeline-kit.ts';
import {
  freePort,
  sleep,
  startAgent,
  startBackend,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// The event pipeline end to end on one backend: stored events, keepalives, registration, TTL
// failures and metrics-only events reach real pipe, tcp and udp handlers, through handler sets,
// built-in and JavaScript filters, mutators and Pipeline resources.

let backend: Backend;
let root: string;
const agents: AgentProc[] = [];
const servers: Array<Server | UdpSocket> = [];
const api = coreApi(() => backend);

const { fileHandler, payloads, events, waitEvents, put, postEvent } = pipelineKit(api, () => root);

test.before(async () => {
  root = tempDir('pipeline');
  backend = await startBackend({
    name: 'pipeline-1',
    extraArgs: ['--max-silenced-expiry-time-allowed', '3600'],
  });
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  for (const s of servers) s.close();
  await backend?.stop();
});

test('a stored check event reaches its pipe handler once, with metrics the store does not keep', async () => {
  const dir = await fileHandler('h-basic');
  const entity = fresh('box');
  await postEvent(
    entity,
    { metadata: { name: 'disk' }, status: 2, output: 'full', handlers: ['h-basic'] },
    { metrics: { points: [{ name: 'disk.used', value: 99, timestamp: 1, tags: [] }] } },
  );
  const [got] = await waitEvents(dir, (e) => e.entity?.metadata?.name === entity, 'handled event');
  assert.is(got.check.metadata.name, 'disk');
  assert.is(got.check.status, 2);
  assert.is(got.check.state, 'failing');
  assert.is(got.metrics.points[0].name, 'disk.used');
  assert.type(got.id, 'string');
  const stored = await api(`/namespaces/default/events/${entity}/disk`);
  assert.is(stored.status, 200);
  assert.is(stored.body.metrics, undefined, 'metrics are not stored');
  assert.is(stored.body.id, got.id, 'the handler saw the stored event (same id)');
  await sleep(1000);
  assert.is(events(dir).filter((e) => e.entity?.metadata?.name === entity).length, 1, 'handled exactly once');
});

test('tcp and udp handlers get the JSON event on real sockets', async () => {
  const tcpPort = await freePort();
  const tcpGot: string[] = [];
  const tcp = createServer((s) => {
    let buf = '';
    s.on('data', (d) => {
      buf += d;
    });
    s.on('end', () => tcpGot.push(buf));
  });
  servers.push(tcp);
  await new Promise<void>((r) => tcp.listen(tcpPort, '127.0.0.1', () => r()));
  const udpGot: string[] = [];
  const udp = createSocket('udp4');
  servers.push(udp);
  udp.on('message', (m) => udpGot.push(m.toString('utf8')));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  await put('handlers', 'h-tcp', { type: 'tcp', socket: { host: '127.0.0.1', port: tcpPort } });
  await put('handlers', 'h-udp', { type: 'udp', socket: { host: '127.0.0.1', port: udp.address().port } });
  const entity = fresh('sock');
  await postEvent(entity, {
    metadata: { name: 'net' },
    status: 1,
    output: 'slow',
    handlers: ['h-tcp', 'h-udp'],
  });
  const t = await waitFor(() => tcpGot.find((s) => s.includes(entity)), {
    timeoutMs: 15000,
    what: 'tcp payload',
  });
  const u = await waitFor(() => udpGot.find((s) => s.includes(entity)), {
    timeoutMs: 15000,
    what: 'udp payload',
  });
  assert.is(JSON.parse(t).check.output, 'slow');
  assert.is(JSON.parse(u).check.output, 'slow');
});

test('handler sets expand (nested), and a missing handler is skipped', async () => {
  const a = await fileHandler('h-set-a');
  const b = await fileHandler('h-set-b');
  await put('handlers', 'set-inner', { type: 'set', handlers: ['h-set-a', 'no-such-handler'] });
  await put('handlers', 'set-outer', { type: 'set', handlers: ['set-inner', 'h-set-b'] });
  const entity = fresh('setbox');
  await postEvent(entity, { metadata: { name: 'sets' }, status: 2, output: 'x', handlers: ['set-outer'] });
  await waitEvents(a, (e) => e.entity?.metadata?.name === entity, 'member of the inner set');
  await waitEvents(b, (e) => e.entity?.metadata?.name === entity, 'member of the outer set');
  await waitFor(
    () =>
      backend.logs().some((l) => l.msg === 'handler does not exist' && l.handler === 'no-such-handler') ||
      undefined,
    { timeoutMs: 5000, what: 'missing handler logged' },
  );
});

test('is_incident passes incidents and resolutions only; a javascript filter and mutator shape the payload', async () => {
  const dir = await fileHandler('h-incident', { filters: ['is_incident'] });
  const entity = fresh('inc');
  const check = (status: number) => ({
    metadata: { name: 'svc' },
    status,
    output: `s${status}`,
    handlers: ['h-incident'],
  });
  await postEvent(entity, check(0));
  await postEvent(entity, check(2));
  await postEvent(entity, check(0));
  await postEvent(entity, check(0));
  await waitFor(
    () => (events(dir).filter((e) => e.entity?.metadata?.name === entity).length >= 2 ? true : undefined),
    { timeoutMs: 15000, what: 'incident and resolution' },
  );
  await sleep(1000);
  const outputs = events(dir)
    .filter((e) => e.entity?.metadata?.name === entity)
    .map((e) => e.check.output)
    .sort();
  assert.equal(
    outputs,
    ['s0', 's2'],
    'the first OK and the repeated OK are dropped; the incident and its resolution pass',
  );

  await put('filters', 'only-web', {
    action: 'allow',
    expressions: ['event.entity.metadata.labels.role == "web"', 'event.check.status > 0'],
  });
  await put('mutators', 'summary', {
    type: 'javascript',
    eval: 'return event.entity.metadata.name + ":" + event.check.output',
  });
  const js = await fileHandler('h-js', { filters: ['only-web'], mutator: 'summary' });
  const web = fresh('web');
  const db = fresh('db');
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: web, labels: { role: 'web' } } },
      check: { metadata: { name: 'http' }, status: 2, output: 'down', handlers: ['h-js'] },
    }),
    'web event',
  );
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: db, labels: { role: 'db' } } },
      check: { metadata: { name: 'http' }, status: 2, output: 'down', handlers: ['h-js'] },
    }),
    'db event',
  );
  await waitFor(() => (payloads(js).includes(`${web}:down`) ? true : undefined), {
    timeoutMs: 15000,
    what: 'mutated payload',
  });
  await sleep(1000);
  assert.not.ok(
    payloads(js).some((p) => p.startsWith(db)),
    'the allow filter dropped the db event',
  );
});

test('silencing marks events (storage goes on), not_silenced drops them, expire_on_resolve ends on the resolution', async () => {
  const dir = await fileHandler('h-quiet', { filters: ['not_silenced'] });
  const entity = fresh('quiet');
  created(
    await api('/namespaces/default/silenced', 'POST', {
      subscription: `entity:${entity}`,
      check: 'db',
      expire_on_resolve: true,
      reason: 'maintenance',
    }),
    'silenced entry',
  );
  const name = `entity:${entity}:db`;
  // --max-silenced-expiry-time-allowed 3600: an entry without expire gets the cap, a longer one is refused.
  const entry = await api(`/namespaces/default/silenced/${encodeURIComponent(name)}`);
  assert.is(entry.body.expire, 3600);
  isError(
    await api('/namespaces/default/silenced', 'POST', {
      subscription: `entity:${entity}`,
      check: 'other',
      expire: 7200,
    }),
    400,
    'expire above the cap',
  );
  await postEvent(entity, {
    metadata: { name: 'db' },
    status: 2,
    output: 'silenced-crit',
    handlers: ['h-quiet'],
  });
  await postEvent(entity, {
    metadata: { name: 'web' },
    status: 2,
    output: 'loud-crit',
    handlers: ['h-quiet'],
  });
  const stored = await api(`/namespaces/default/events/${entity}/db`);
  assert.is(stored.status, 200, 'a silenced event is stored');
  assert.is(stored.body.check.is_silenced, true);
  assert.equal(stored.body.check.silenced, [name]);
  assert.is((await api(`/namespaces/default/events/${entity}/web`)).body.check.is_silenced, false);
  await waitEvents(
    dir,
    (e) => e.entity?.metadata?.name === entity && e.check.output === 'loud-crit',
    'the unsilenced event handled',
  );
  await sleep(1000);
  assert.not.ok(
    events(dir).some((e) => e.check.output === 'silenced-crit'),
    'not_silenced dropped the silenced event',
  );
  // The resolution is stored (still silenced by the entry), then the entry goes.
  await postEvent(entity, { metadata: { name: 'db' }, status: 0, output: 'back', handlers: ['h-quiet'] });
  await waitFor(
    async () =>
      (await api(`/namespaces/default/silenced/${encodeURIComponent(name)}`)).status === 404
        ? true
        : undefined,
    { timeoutMs: 10000, what: 'expire_on_resolve entry removed' },
  );
  await postEvent(entity, {
    metadata: { name: 'db' },
    status: 2,
    output: 'crit-again',
    handlers: ['h-quiet'],
  });
  await waitEvents(
    dir,
    (e) => e.entity?.metadata?.name === entity && e.check.output === 'crit-again',
    'handled once the entry is gone',
  );
});

test('a Pipeline resource runs its workflows: filter, only_check_output mutator, handler', async () => {
  const dir = await fileHandler('h-wf');
  await put('filters', 'crit-only', { action: 'allow', expressions: ['event.check.status == 2'] });
  await put('pipelines', 'pager', {
    workflows: [
      {
        name: 'page',
        filters: [{ name: 'crit-only', type: 'EventFilter', api_version: 'core/v2' }],
        mutator: { name: 'only_check_output', type: 'Mutator', api_version: 'core/v2' },
        handler: { name: 'h-wf', type: 'Handler', api_version: 'core/v2' },
      },
    ],
  });
  const entity = fresh('wf');
  const ref = [{ name: 'pager', type: 'Pipeline', api_version: 'core/v2' }];
  await postEvent(entity, { metadata: { name: 'p1' }, status: 1, output: `warn-${entity}`, pipelines: ref });
  await postEvent(entity, { metadata: { name: 'p2' }, status: 2, output: `crit-${entity}`, pipelines: ref });
  await waitFor(() => (payloads(dir).includes(`crit-${entity}`) ? true : undefined), {
    timeoutMs: 15000,
    what: 'raw check output',
  });
  await sleep(1000);
  assert.not.ok(payloads(dir).includes(`warn-${entity}`), 'the warning was filtered');
});

test('metrics-only events are handled and never stored', async () => {
  const dir = await fileHandler('h-metrics', { filters: ['has_metrics'] });
  const entity = fresh('metrics');
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: entity } },
      metrics: {
        handlers: ['h-metrics'],
        points: [{ name: 'cpu.idle', value: 42, timestamp: 1700000000, tags: [] }],
      },
    }),
    'metrics event',
  );
  const [got] = await waitEvents(dir, (e) => e.entity?.metadata?.name === entity, 'metrics handled');
  assert.is(got.metrics.points[0].value, 42);
  assert.is((await api(`/namespaces/default/events/${entity}`)).body.length, 0, 'nothing stored');
});

test('agents: the keepalive handler set gets keepalives; registration is handled and logged, not stored', async () => {
  const ka = await fileHandler('h-ka');
  await put('handlers', 'keepalive', { type: 'set', handlers: ['h-ka'] });
  const reg = await fileHandler('registration');
  const name = fresh('agent');
  const a = await startAgent({ name, backendUrls: [backend.agentUrl], keepaliveInterval: 1, warning: 5 });
  agents.push(a);
  const [r] = await waitEvents(reg, (e) => e.entity?.metadata?.name === name, 'registration event');
  assert.is(r.check.metadata.name, 'registration');
  assert.is(r.check.status, 1);
  assert.equal(r.check.handlers, ['registration']);
  const [k] = await waitEvents(
    ka,
    (e) => e.entity?.metadata?.name === name && e.check?.metadata?.name === 'keepalive',
    'keepalive event',
  );
  assert.is(k.check.status, 0);
  assert.match(k.check.output, /^Keepalive last sent from /);
  assert.is(
    (await api(`/namespaces/default/events/${name}/registration`)).status,
    404,
    'registration events are not stored',
  );
  assert.ok(
    backend.logs().some((l) => l.msg === 'registration event' && l.entity === name),
    'registration logged',
  );
});

test('StatsD metrics from an agent reach the statsd event handlers', async () => {
  const dir = await fileHandler('h-statsd');
  const name = fresh('statsd');
  const a = await startAgent({
    name,
    backendUrls: [backend.agentUrl],
    extraArgs: ['--statsd-flush-interval', '1', '--statsd-event-handlers', 'h-statsd'],
  });
  agents.push(a);
  const udp = createSocket('udp4');
  servers.push(udp);
  await waitFor(async () => (await api(`/namespaces/default/entities/${name}`)).status === 200 || undefined, {
    timeoutMs: 15000,
    what: 'agent registered',
  });
  // Sent until one flush carries it (the listener may not be up the first time).
  const sender = setInterval(() => udp.send('pipeline.hits:7|c', a.ports.statsd, '127.0.0.1'), 500);
  try {
    const [got] = await waitEvents(
      dir,
      (e) =>
        e.entity?.metadata?.name === name &&
        (e.metrics?.points ?? []).some((p: any) => String(p.name).includes('pipeline.hits')),
      'statsd metrics handled',
      20000,
    );
    assert.equal(got.metrics.handlers, ['h-statsd']);
  } finally {
    clearInterval(sender);
  }
});

test('a check TTL failure goes to the check handlers', async () => {
  const dir = await fileHandler('h-ttl');
  const entity = fresh('ttl');
  await postEvent(entity, {
    metadata: { name: 'cron' },
    status: 0,
    output: 'ran',
    ttl: 5,
    interval: 1,
    handlers: ['h-ttl'],
  });
  const [got] = await waitEvents(
    dir,
    (e) => e.entity?.metadata?.name === entity && e.check.status === 1,
    'ttl failure handled',
    20000,
  );
  assert.match(got.check.output, /^Last check execution was \d+ seconds ago$/);
});

test('a slow handler does not hold up the events of other handlers', async () => {
  await put('handlers', 'h-slow', { type: 'pipe', command: 'sleep 20' });
  const fast = await fileHandler('h-fast');
  const entity = fresh('slowfast');
  // More slow jobs than the node has job slots (64 by default).
  await Promise.all(
    Array.from({ length: 80 }, (_, i) =>
      postEvent(`${entity}-s${i}`, {
        metadata: { name: 'slow' },
        status: 2,
        output: 'zzz',
        handlers: ['h-slow'],
      }),
    ),
  );
  await postEvent(entity, { metadata: { name: 'fast' }, status: 2, output: 'quick', handlers: ['h-fast'] });
  // Well before the first slow handler ends: it did not wait for a slot behind them.
  await waitEvents(
    fast,
    (e) => e.entity?.metadata?.name === entity,
    'the fast handler ran while slow ones were queued',
    15000,
  );
});

test.run();
