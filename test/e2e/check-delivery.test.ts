// suite-timeout: 360
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from 'nats';
import { subjects } from '../../proto/names.ts';
import { coreApi } from '../harness/api.ts';
import {
  freePort,
  sleep,
  startAgent,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// Check requests published on NATS reach real agents through the gateway sessions of a cluster of
// two backends (one etcd, one nats-server with its monitoring port): fan-out to every agent of a
// subscription, `entity:<name>` to one agent, round robin across three agents on two nodes, the
// stored entity's subscriptions replacing the handshake's, garbage dropped without closing the
// session, and no NATS subscription left behind by a closed session.

let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let monitorPort: number;
let b1: Backend;
let b2: Backend;
let nc: NatsConnection;
const agents: AgentProc[] = [];
const api = coreApi(() => b1);

let issuedSeq = Math.floor(Date.now() / 1000);
const request = (name: string, command = 'echo hello', extra: Record<string, unknown> = {}) => ({
  config: { metadata: { name, namespace: 'default' }, command, interval: 60, handlers: [] },
  issued: ++issuedSeq,
  ...extra,
});

const publish = async (subject: string, payload: unknown) => {
  nc.publish(subject, typeof payload === 'string' ? payload : JSON.stringify(payload));
  await nc.flush();
};

async function launch(
  name: string,
  backend: Backend,
  subscriptions: string[],
  extraArgs: string[] = [],
): Promise<AgentProc> {
  const a = await startAgent({
    name,
    backendUrls: [backend.agentUrl],
    subscriptions,
    keepaliveInterval: 5,
    warning: 20,
    extraArgs,
  });
  agents.push(a);
  // The session subscribes before it routes the first keepalive, so a stored entity means it listens.
  await waitFor(async () => (await api(`/namespaces/default/entities/${name}`)).status === 200, {
    timeoutMs: 20000,
    what: `entity ${name}`,
  });
  return a;
}

const eventOf = async (entity: string, check: string) => {
  const r = await api(`/namespaces/default/events/${entity}/${check}`);
  return r.status === 200 ? r.body : undefined;
};
const waitEvent = (entity: string, check: string) =>
  waitFor(() => eventOf(entity, check), { timeoutMs: 20000, what: `event ${entity}/${check}` });

/** Subjects of every subscription the nats-server holds now (its monitoring endpoint). */
async function serverSubjects(): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${monitorPort}/connz?subs=1&limit=1000`);
  const body = (await res.json()) as { connections: { subscriptions_list?: string[] }[] };
  return body.connections.flatMap((c) => c.subscriptions_list ?? []);
}
const countOf = async (subject: string) => (await serverSubjects()).filter((s) => s === subject).length;

test.before(async () => {
  monitorPort = await freePort();
  [etcdSvc, natsSvc] = await Promise.all([
    startEtcd(),
    startNats({ extraArgs: ['-m', String(monitorPort)] }),
  ]);
  b1 = await startBackend({ name: 'deliver-1', etcdUrl: etcdSvc.url, natsUrl: natsSvc.url });
  b2 = await startBackend({ name: 'deliver-2', etcdUrl: etcdSvc.url, natsUrl: natsSvc.url });
  nc = await connect({ servers: natsSvc.url });
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  await nc?.close().catch(() => {});
  for (const b of [b1, b2]) await b?.stop().catch(() => {});
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('a subscription request reaches every agent of it, on either node; entity:<name> only that agent', async () => {
  await Promise.all([launch('fan-a', b1, ['fan']), launch('fan-b', b2, ['fan', 'other'])]);
  await publish(subjects.subscription('default', 'fan'), request('fan-check'));
  const [ea, eb] = await Promise.all([waitEvent('fan-a', 'fan-check'), waitEvent('fan-b', 'fan-check')]);
  assert.is(ea.check.output.trim(), 'hello');
  assert.is(eb.check.output.trim(), 'hello');
  assert.is(ea.check.issued, eb.check.issued);

  await publish(subjects.subscription('default', 'entity:fan-b'), request('own-check', 'echo mine'));
  const own = await waitEvent('fan-b', 'own-check');
  assert.is(own.check.output.trim(), 'mine');
  await sleep(1500);
  assert.is(await eventOf('fan-a', 'own-check'), undefined, 'entity:fan-b reached fan-a');
});

test('round robin: 600 requests across three agents on two nodes, each run exactly once, spread within 20%', async () => {
  const names = ['rr-1', 'rr-2', 'rr-3'];
  const fast = ['--events-rate-limit', '1000', '--events-burst-limit', '1000'];
  await Promise.all([
    launch('rr-1', b1, ['rr'], fast),
    launch('rr-2', b2, ['rr'], fast),
    launch('rr-3', b1, ['rr'], fast),
  ]);
  const checks = Array.from({ length: 600 }, (_, i) => `rr-check-${i}`);
  for (const c of checks)
    nc.publish(subjects.roundRobin('default', 'rr'), JSON.stringify(request(c, 'echo rr')));
  await nc.flush();
  const ranOn = await waitFor(
    async () => {
      const all = (await api('/namespaces/default/events')).body as any[];
      const mine = all.filter(
        (e) => names.includes(e.entity?.metadata?.name) && checks.includes(e.check?.metadata?.name),
      );
      return mine.length >= checks.length ? mine : undefined;
    },
    { timeoutMs: 120000, intervalMs: 1000, what: '600 round-robin events' },
  );
  await sleep(1500);
  const final = ((await api('/namespaces/default/events')).body as any[]).filter(
    (e) => names.includes(e.entity?.metadata?.name) && checks.includes(e.check?.metadata?.name),
  );
  assert.ok(final.length >= ranOn.length);
  const byCheck = new Map<string, string[]>();
  for (const e of final)
    byCheck.set(e.check.metadata.name, [
      ...(byCheck.get(e.check.metadata.name) ?? []),
      e.entity.metadata.name,
    ]);
  for (const c of checks) assert.is(byCheck.get(c)?.length, 1, `${c} ran on ${byCheck.get(c)}`);
  const perAgent = names.map((n) => final.filter((e) => e.entity.metadata.name === n).length);
  // NATS picks a queue member at random: 600 draws over 3 members give 200 ± 11.5 (one sigma)
  // each, so 200 ± 20% holds at 3.5 sigma (a flake about once in 700 runs).
  for (const n of perAgent) assert.ok(n >= 160 && n <= 240, `per-agent counts ${perAgent}`);
  assert.is(
    perAgent.reduce((a, b) => a + b, 0),
    600,
  );
});

test('subscriptions stored through the API replace the handshake ones, live and at the next session', async () => {
  const a = await launch('api-sub', b2, ['header-sub']);
  assert.is(await countOf(subjects.subscription('default', 'header-sub')), 1);
  const cur = await api('/namespaces/default/entities/api-sub');
  const res = await api(
    '/namespaces/default/entities/api-sub',
    'PATCH',
    { subscriptions: ['stored-sub'] },
    { 'If-Match': cur.headers.get('etag')! },
  );
  assert.is(res.status, 200, JSON.stringify(res.body));
  await a.proc.waitForLine((l) => l.includes('entity config applied') && l.includes('stored-sub'), 10000);
  await waitFor(async () => (await countOf(subjects.subscription('default', 'header-sub'))) === 0, {
    timeoutMs: 5000,
    what: 'header-sub unsubscribed',
  });
  assert.is(await countOf(subjects.roundRobin('default', 'header-sub')), 0);
  assert.is(await countOf(subjects.roundRobin('default', 'stored-sub')), 1);

  await publish(subjects.subscription('default', 'header-sub'), request('via-header'));
  await publish(subjects.subscription('default', 'stored-sub'), request('via-stored'));
  await waitEvent('api-sub', 'via-stored');
  // The agent's own subscription survives the replacement.
  await publish(subjects.subscription('default', 'entity:api-sub'), request('via-entity'));
  await waitEvent('api-sub', 'via-entity');
  await sleep(1500);
  assert.is(
    await eventOf('api-sub', 'via-header'),
    undefined,
    'the replaced header subscription still delivered',
  );

  // A new session starts from the stored entity, whatever the handshake says.
  await a.stop();
  agents.splice(agents.indexOf(a), 1);
  const again = await launch('api-sub', b1, ['header-sub']);
  await again.proc.waitForLine((l) => l.includes('entity config applied') && l.includes('stored-sub'), 10000);
  await waitFor(async () => (await countOf(subjects.subscription('default', 'stored-sub'))) === 1, {
    timeoutMs: 5000,
    what: 'stored-sub subscribed',
  });
  assert.is(await countOf(subjects.subscription('default', 'header-sub')), 0);
  await publish(subjects.roundRobin('default', 'stored-sub'), request('rr-stored'));
  await waitEvent('api-sub', 'rr-stored');
});

test('garbage on a subject is dropped with a warning; the session stays and takes the next request', async () => {
  const a = await launch('garbage', b1, ['junk']);
  const connectedBefore = b1
    .logs()
    .filter((l) => l.msg === 'agent connected' && l.agent === 'garbage').length;
  await publish(subjects.subscription('default', 'junk'), 'not json {');
  await publish(subjects.roundRobin('default', 'junk'), { config: { metadata: { name: 'x' } }, issued: 1 });
  await publish(subjects.subscription('default', 'junk'), {
    config: { metadata: { name: 'neg' }, command: 'true' },
    issued: -3,
  });
  await publish(subjects.subscription('default', 'junk'), request('after-junk', 'echo fine'));
  const e = await waitEvent('garbage', 'after-junk');
  assert.is(e.check.output.trim(), 'fine');
  const logs = b1.logs();
  assert.ok(logs.some((l) => l.level === 'warn' && l.msg === 'dropping a check request that is not JSON'));
  assert.ok(
    logs.filter((l) => l.level === 'warn' && l.msg === 'dropping an invalid check request').length >= 2,
  );
  assert.is(
    logs.filter((l) => l.msg === 'agent connected' && l.agent === 'garbage').length,
    connectedBefore,
    'the session was closed',
  );
  assert.not.ok(
    a.proc.lines().some((l) => l.includes('"msg":"disconnected"')),
    'the agent saw a disconnection',
  );
});

test('protobuf agents get check requests in their encoding', async () => {
  await launch('proto-deliver', b2, ['pb'], ['--protobuf']);
  await publish(subjects.subscription('default', 'pb'), request('pb-check', 'echo pb'));
  const e = await waitEvent('proto-deliver', 'pb-check');
  assert.is(e.check.output.trim(), 'pb');
});

test('a stalled agent: requests beyond the socket buffer limit are dropped with a warning, then delivery resumes', async () => {
  const a = await launch('stalled', b2, ['stall']);
  await a.kill('SIGSTOP');
  try {
    // 60 requests of half a megabyte: far beyond the kernel's socket buffers plus the 8 MiB limit.
    const padding = 'x'.repeat(512 * 1024);
    for (let i = 0; i < 60; i++) {
      nc.publish(
        subjects.subscription('default', 'stall'),
        JSON.stringify(
          request('stall-big', 'true', {
            config: {
              metadata: { name: 'stall-big', namespace: 'default', annotations: { padding } },
              command: 'true',
              interval: 60,
            },
          }),
        ),
      );
      if (i % 10 === 9) await nc.flush();
    }
    await nc.flush();
    await waitFor(
      () =>
        b2
          .logs()
          .some(
            (l) =>
              l.level === 'warn' &&
              l.msg === 'dropping check requests: the agent is not reading' &&
              l.agent === 'stalled',
          ),
      { timeoutMs: 20000, what: 'the back-pressure warning' },
    );
  } finally {
    await a.kill('SIGCONT');
  }
  // Once the agent drained its backlog, requests flow again (a request sent before that is dropped).
  const e = await waitFor(
    async () => {
      await publish(subjects.subscription('default', 'entity:stalled'), request('after-stall', 'echo back'));
      await sleep(500);
      return eventOf('stalled', 'after-stall');
    },
    { timeoutMs: 30000, intervalMs: 500, what: 'a request delivered after the stall' },
  );
  assert.is(e.check.output.trim(), 'back');
  const warns = b2.logs().filter((l) => l.level === 'warn' && l.agent === 'stalled');
  // One warning per stall rather than per request (the kernel may take a little more now and then,
  // which starts a new stall), and the resumption says how many were dropped.
  const stalls = warns.filter((l) => l.msg === 'dropping check requests: the agent is not reading').length;
  const dropped = warns
    .filter((l) => l.msg === 'the agent reads again; check requests were dropped meanwhile')
    .reduce((n, l) => n + l.dropped, 0);
  assert.ok(stalls >= 1 && dropped > stalls, `stall warnings ${stalls}, dropped ${dropped}`);
});

test('a closed session leaves no subscription behind and receives nothing', async () => {
  const subs = [
    subjects.subscription('default', 'leave-sub'),
    subjects.roundRobin('default', 'leave-sub'),
    subjects.subscription('default', 'entity:leaver'),
    subjects.roundRobin('default', 'entity:leaver'),
  ];
  const before = (await serverSubjects()).length;
  const a = await launch('leaver', b1, ['leave-sub']);
  for (const s of subs) assert.is(await countOf(s), 1, s);
  await a.stop();
  agents.splice(agents.indexOf(a), 1);
  await waitFor(
    async () => {
      for (const s of subs) if ((await countOf(s)) !== 0) return false;
      return true;
    },
    { timeoutMs: 10000, what: 'subscriptions gone' },
  );
  assert.ok(
    (await serverSubjects()).length <= before,
    'the server holds more subscriptions than before the session',
  );

  // Another agent of the subscription takes every round-robin request: none is lost to the old session.
  await launch('stayer', b2, ['leave-sub']);
  for (let i = 0; i < 6; i++)
    nc.publish(subjects.roundRobin('default', 'leave-sub'), JSON.stringify(request(`leave-${i}`)));
  await nc.flush();
  for (let i = 0; i < 6; i++) await waitEvent('stayer', `leave-${i}`);
  for (let i = 0; i < 6; i++) assert.is(await eventOf('leaver', `leave-${i}`), undefined);
});

test.run();
