// suite-timeout: 300
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startAgent, startBackend, waitFor, type AgentProc, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh, type Body } from '../harness/api.ts';
import { scheduleKit } from '../harness/schedule-kit.ts';
import { buckets } from '../../proto/names.ts';
import { splayOf } from '../../actors/schedule/splay.ts';

// The schedule actor end to end: a real backend and real agents. Interval checks run on every
// subscribed agent at the splay phase, an update takes effect, a delete stops it, `publish: false`
// publishes nothing, ad hoc execution runs once, round robin reaches one agent per tick, proxy
// requests run for matching entities, and a cron check is armed for the next minute. A NATS client
// listens to the request subjects to see exactly what the scheduler publishes.

let backend: Backend;
const agents: AgentProc[] = [];
const api = coreApi(() => backend);
let kit: Awaited<ReturnType<typeof scheduleKit>>;

const web1 = fresh('web-a'),
  web2 = fresh('web-b'),
  db1 = fresh('db-a');

/** Deletes a check; the API answers 204, else the test fails here rather than leaving it scheduled. */
const deleteCheck = async (name: string) => {
  const r = await api(`/namespaces/default/checks/${name}`, 'DELETE');
  assert.is(r.status, 204, `delete ${name}: ${r.status} ${JSON.stringify(r.body)}`);
};

test.before(async () => {
  backend = await startBackend({ name: 'sched-1' });
  kit = await scheduleKit(api, backend.embedded!.natsListen);
  for (const [name, subs] of [
    [web1, ['web']],
    [web2, ['web']],
    [db1, ['db']],
  ] as const) {
    agents.push(await startAgent({ name, backendUrls: backend.agentUrl, subscriptions: [...subs] }));
  }
  for (const a of agents) {
    await waitFor(async () => (await api(`/namespaces/default/entities/${a.name}`)).status === 200, {
      timeoutMs: 20000,
      what: `entity ${a.name}`,
    });
  }
  await sleep(500);
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  await kit?.close();
  await backend?.stop();
});

test('interval check: runs on every subscribed agent at the splay phase; update takes effect; delete stops it', async () => {
  const name = fresh('every2');
  await kit.createCheck(name, { command: 'echo v1', interval: 2, subscriptions: ['web'], publish: true });
  for (const a of [web1, web2]) {
    await waitFor(async () => (await kit.eventOf(a, name))?.check?.output === 'v1\n', {
      timeoutMs: 15000,
      intervalMs: 200,
      what: `${a} runs ${name}`,
    });
  }
  assert.is(await kit.eventOf(db1, name), undefined, 'an agent without the subscription never runs it');

  const reqs = kit.requestsFor(name);
  assert.ok(reqs.length >= 1);
  for (const r of reqs) {
    assert.is(r.subject, 'monitor.sub.default.web');
    assert.is(r.req.config.command, 'echo v1');
    assert.type(r.req.issued, 'number');
  }
  // One request per tick, ticks at the deterministic phase: issued values 2 s apart, never repeated.
  await waitFor(() => kit.requestsFor(name).length >= 3, { timeoutMs: 10000, what: 'three ticks' });
  const issued = kit.requestsFor(name).map((r) => r.req.issued as number);
  assert.is(new Set(issued).size, issued.length, `no tick published twice: ${issued}`);
  // floor((k*2000 + phase) / 1000): whole intervals apart.
  for (let i = 1; i < issued.length; i++) assert.is(issued[i]! - issued[i - 1]!, 2, `spacing ${issued}`);
  const phaseMs = Number(splayOf(name) % 2000n);
  for (const r of kit.requestsFor(name)) {
    // Published right after the phase instant; the arrival is a little later.
    const offset = (((r.at - phaseMs) % 2000) + 2000) % 2000;
    assert.ok(offset < 1000, `published ${offset} ms after its phase instant`);
  }

  const current = (await api<Body>(`/namespaces/default/checks/${name}`)).body;
  const put = await api(`/namespaces/default/checks/${name}`, 'PUT', { ...current, command: 'echo v2' });
  assert.ok(put.status < 300, `update: ${put.status}`);
  for (const a of [web1, web2]) {
    await waitFor(async () => (await kit.eventOf(a, name))?.check?.output === 'v2\n', {
      timeoutMs: 10000,
      intervalMs: 200,
      what: `${a} runs the new command`,
    });
  }

  await deleteCheck(name);
  await sleep(1500);
  const countAfterDelete = kit.requestsFor(name).length;
  const historyAfterDelete = (await kit.eventOf(web1, name))!.check.history.length;
  await sleep(5000);
  assert.is(kit.requestsFor(name).length, countAfterDelete, 'no request published after the delete');
  assert.is(
    (await kit.eventOf(web1, name))!.check.history.length,
    historyAfterDelete,
    'no execution after the delete',
  );
});

test('publish false: nothing is published', async () => {
  const name = fresh('quiet');
  await kit.createCheck(name, { command: 'echo quiet', interval: 1, subscriptions: ['web'], publish: false });
  await sleep(4000);
  assert.is(kit.requestsFor(name).length, 0);
  assert.is(await kit.eventOf(web1, name), undefined);
});

test('ad hoc execution runs once, on the subscriptions it names', async () => {
  const name = fresh('adhoc');
  await kit.createCheck(name, {
    command: 'echo adhoc',
    interval: 60,
    subscriptions: ['web'],
    publish: false,
  });
  // Garbage on the queue is dropped with a warning and does not stop the executor.
  const js = kit.nc.jetstream();
  await js.publish('monitor.adhoc.default', Buffer.from('not json'));
  await js.publish('monitor.adhoc.default', Buffer.from(JSON.stringify({ namespace: 'default', check: 42 })));
  await js.publish(
    'monitor.adhoc.default',
    Buffer.from(JSON.stringify({ namespace: 'default', check: 'no-such-check', issued: 1 })),
  );
  const r = await api<Body>(`/namespaces/default/checks/${name}/execute`, 'POST', {
    check: name,
    subscriptions: ['db'],
  });
  assert.is(r.status, 202);
  const ev = await waitFor(() => kit.eventOf(db1, name), {
    timeoutMs: 15000,
    intervalMs: 200,
    what: 'the ad hoc result',
  });
  assert.is(ev.check.output, 'adhoc\n');
  assert.is(ev.check.issued, r.body.issued);
  await sleep(3000);
  assert.is((await kit.eventOf(db1, name))!.check.history.length, 1, 'executed once');
  assert.is(kit.requestsFor(name).length, 1, 'published once');
  assert.is(kit.requestsFor(name)[0]!.subject, 'monitor.sub.default.db');
  assert.is(await kit.eventOf(web1, name), undefined, "the named subscriptions replace the check's");
});

test('a check inside a subdue window publishes nothing; outside it runs', async () => {
  const name = fresh('subdued');
  const iso = (ms: number) => new Date(ms).toISOString();
  await kit.createCheck(name, {
    command: 'echo subdued',
    interval: 1,
    subscriptions: ['web'],
    publish: true,
    subdues: [{ begin: iso(Date.now() - 3_600_000), end: iso(Date.now() + 3_600_000) }],
  });
  await sleep(3500);
  assert.is(kit.requestsFor(name).length, 0, 'nothing published inside the window');
  const current = (await api<Body>(`/namespaces/default/checks/${name}`)).body;
  const put = await api(`/namespaces/default/checks/${name}`, 'PUT', {
    ...current,
    subdues: [{ begin: iso(Date.now() - 7_200_000), end: iso(Date.now() - 3_600_000) }],
  });
  assert.ok(put.status < 300);
  await waitFor(() => kit.requestsFor(name).length >= 1, {
    timeoutMs: 10000,
    what: 'a request once the window has passed',
  });
  await deleteCheck(name);
});

test('a cron expression the scheduler cannot run is refused by the API with a clear error', async () => {
  for (const cron of ['* * * *', '61 * * * *', 'CRON_TZ=Nowhere/Land * * * * *']) {
    const r = await api<Body>('/namespaces/default/checks', 'POST', {
      metadata: { name: fresh('badcron'), namespace: 'default' },
      command: 'true',
      cron,
      subscriptions: ['web'],
    });
    assert.is(r.status, 400, cron);
    assert.match(r.body.message, /cron/);
  }
});

test('round robin: each tick reaches one agent of the subscription', async () => {
  const name = fresh('rr');
  await kit.createCheck(name, {
    command: 'echo rr',
    interval: 2,
    subscriptions: ['web'],
    round_robin: true,
    publish: true,
  });
  await waitFor(() => kit.requestsFor(name).length >= 4, { timeoutMs: 15000, what: 'four ticks' });
  await sleep(1500);
  assert.ok(kit.requestsFor(name).every((r) => r.subject === 'monitor.rr.default.web'));
  const ticks = kit.requestsFor(name).length;
  const runs =
    ((await kit.eventOf(web1, name))?.check.history.length ?? 0) +
    ((await kit.eventOf(web2, name))?.check.history.length ?? 0);
  assert.ok(runs >= 1 && runs <= ticks, `${runs} runs for ${ticks} ticks`);
  await deleteCheck(name);
});

test('proxy requests: one request per matching entity, with proxy_entity_name', async () => {
  const proxy = fresh('router');
  created(
    await api('/namespaces/default/entities', 'POST', {
      metadata: { name: proxy, namespace: 'default', labels: { kind: 'router' } },
      entity_class: 'proxy',
    }),
    'proxy entity',
  );
  const name = fresh('ping');
  await kit.createCheck(name, {
    command: 'echo pong',
    interval: 2,
    subscriptions: ['db'],
    publish: true,
    proxy_requests: {
      entity_attributes: ["entity.entity_class === 'proxy'", "entity.metadata.labels.kind === 'router'"],
    },
  });
  const ev = await waitFor(() => kit.eventOf(proxy, name), {
    timeoutMs: 15000,
    intervalMs: 200,
    what: 'the proxy result',
  });
  assert.is(ev.check.output, 'pong\n');
  const reqs = kit.requestsFor(name);
  assert.ok(
    reqs.length >= 1 && reqs.every((r) => r.req.config.proxy_entity_name === proxy),
    'only the matching entity',
  );
  await deleteCheck(name);

  // Ad hoc execution of a proxy check expands the same way.
  const once = fresh('ping-once');
  await kit.createCheck(once, {
    command: 'echo once',
    interval: 60,
    subscriptions: ['db'],
    publish: false,
    proxy_requests: { entity_attributes: ["entity.metadata.name === '" + proxy + "'"] },
  });
  assert.is((await api(`/namespaces/default/checks/${once}/execute`, 'POST', {})).status, 202);
  const adhoc = await waitFor(() => kit.eventOf(proxy, once), {
    timeoutMs: 15000,
    intervalMs: 200,
    what: 'the ad hoc proxy result',
  });
  assert.is(adhoc.check.output, 'once\n');
  assert.equal(
    kit.requestsFor(once).map((r) => r.req.config.proxy_entity_name),
    [proxy],
  );
});

test('a cron check is armed for the next whole minute', async () => {
  const name = fresh('cron');
  await kit.createCheck(name, {
    command: 'echo cron',
    cron: '* * * * *',
    subscriptions: ['web'],
    publish: true,
  });
  const js = kit.nc.jetstream();
  const kv = await js.views.kv(buckets.schedules);
  const record = await waitFor(
    async () => {
      for await (const key of await kv.keys()) {
        if (!key.endsWith(`.default.${name}`)) continue;
        const e = await kv.get(key);
        if (e?.value.length) return JSON.parse(Buffer.from(e.value).toString()) as Body;
      }
      return undefined;
    },
    { timeoutMs: 10000, intervalMs: 200, what: 'the schedule record' },
  );
  const at = record.timers.tick.at as number;
  assert.is(at % 60_000, 0, 'on a whole minute');
  assert.ok(at > Date.now() - 1000 && at <= Date.now() + 61_000, 'the next minute');
  await deleteCheck(name);
});

test('after a backend restart the schedule carries on at the same phase', async () => {
  const name = fresh('survives');
  await kit.createCheck(name, { command: 'echo again', interval: 2, subscriptions: ['web'], publish: true });
  await waitFor(() => kit.requestsFor(name).length >= 2, {
    timeoutMs: 15000,
    what: 'ticks before the restart',
  });
  await backend.stop();
  const restartedAt = Date.now();
  backend = await startBackend(backend.options);
  await waitFor(() => kit.requestsFor(name).filter((r) => r.at > restartedAt).length >= 2, {
    timeoutMs: 40000,
    intervalMs: 250,
    what: 'ticks after the restart',
  });
  const issued = kit.requestsFor(name).map((r) => r.req.issued as number);
  assert.is(new Set(issued).size, issued.length, `no tick twice: ${issued}`);
  for (const x of issued) assert.is((x - issued[0]!) % 2, 0, `same phase: ${issued}`);
  await deleteCheck(name);
});

test('at start every check gets an armed schedule, even one whose schedule record was lost', async () => {
  const name = fresh('ensured');
  await kit.createCheck(name, {
    command: 'echo ensured',
    interval: 2,
    subscriptions: ['web'],
    publish: true,
  });
  await waitFor(() => kit.requestsFor(name).length >= 1, { timeoutMs: 15000, what: 'a first tick' });
  // Lose the record (the running owner's next write then fails its compare-and-set and finds
  // nothing to reload); after a restart only the start-up `ensure` can arm the check again.
  const kv = await kit.nc.jetstream().views.kv(buckets.schedules);
  const purged: string[] = [];
  for await (const key of await kv.keys()) {
    if (!key.endsWith(`.default.${name}`)) continue;
    await kv.purge(key);
    purged.push(key);
  }
  assert.is(purged.length, 1, `the check's one schedule record is purged: ${purged}`);
  const gone = await kv.get(purged[0]!);
  assert.ok(!gone || gone.operation !== 'PUT', `no value left under ${purged[0]}`);
  await backend.stop();
  backend = await startBackend(backend.options);
  const restartedAt = Date.now();
  await waitFor(() => kit.requestsFor(name).filter((r) => r.at > restartedAt).length >= 1, {
    timeoutMs: 40000,
    intervalMs: 250,
    what: 'a tick after the restart without the record',
  });
  await deleteCheck(name);
});

test.run();
