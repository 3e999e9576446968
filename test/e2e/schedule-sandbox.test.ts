// suite-timeout: 180
// suite-exclusive: asserts /health answers within 2 s while sandbox bombs run in proxy_requests expressions
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startAgent, startBackend, waitFor, type AgentProc, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh } from '../harness/api.ts';
import { scheduleKit } from '../harness/schedule-kit.ts';

// The scheduler's proxy_requests expressions run in the JavaScript sandbox: hostile ones must neither
// end nor freeze the backend. Apart from schedule.test.ts because its /health bound needs the CPU to
// itself. A NATS client listens to the request subjects to see what the scheduler publishes.

let backend: Backend;
let agent: AgentProc;
const api = coreApi(() => backend);
let kit: Awaited<ReturnType<typeof scheduleKit>>;

test.before(async () => {
  backend = await startBackend({ name: 'sched-sandbox' });
  kit = await scheduleKit(api, backend.embedded!.natsListen);
  agent = await startAgent({ name: fresh('db'), backendUrls: backend.agentUrl, subscriptions: ['db'] });
  await waitFor(async () => (await api(`/namespaces/default/entities/${agent.name}`)).status === 200, {
    timeoutMs: 20000,
    what: `entity ${agent.name}`,
  });
});

test.after(async () => {
  await agent?.stop().catch(() => {});
  await kit?.close();
  await backend?.stop();
});

/**
 * A proxy check with `expr` as its entity_attributes fires every second for 4 s: the backend must
 * keep running and answering, no entity matches, and a plain proxy check still runs afterwards.
 */
async function survivesEntityAttributes(expr: string, what: string) {
  const proxy = fresh('switch');
  created(
    await api('/namespaces/default/entities', 'POST', {
      metadata: { name: proxy, namespace: 'default' },
      entity_class: 'proxy',
    }),
    'proxy entity',
  );
  const evil = fresh('evil');
  await kit.createCheck(evil, {
    command: 'echo evil',
    interval: 1,
    subscriptions: ['db'],
    publish: true,
    proxy_requests: { entity_attributes: [expr] },
  });
  for (let i = 0; i < 4; i++) {
    await sleep(1000);
    assert.ok(backend.proc.running, `${what}: the backend process is gone`);
    const t0 = Date.now();
    assert.is((await backend.health()).status, 200, what);
    assert.ok(Date.now() - t0 < 2000, `${what}: /health took ${Date.now() - t0} ms`);
  }
  assert.is(kit.requestsFor(evil).length, 0, `${what}: no entity matches`);
  const good = fresh('good');
  await kit.createCheck(good, {
    command: 'echo good',
    interval: 1,
    subscriptions: ['db'],
    publish: true,
    proxy_requests: { entity_attributes: [`entity.metadata.name == '${proxy}'`] },
  });
  const ev = await waitFor(() => kit.eventOf(proxy, good), {
    timeoutMs: 15000,
    intervalMs: 200,
    what: `${what}: the good check`,
  });
  assert.is(ev.check.output, 'good\n');
  for (const n of [evil, good]) await api(`/namespaces/default/checks/${n}`, 'DELETE');
}

test('entity_attributes that reject a promise do not end the backend', async () => {
  // Regression (issue 13): under node:vm the rejection reached the process's unhandled rejection
  // handler, which ended the backend.
  await survivesEntityAttributes("Promise.reject(new Error('x')), true", 'Promise.reject');
  assert.ok(
    backend
      .logs()
      .some((l) => l.msg?.startsWith('proxy entity_attributes expression failed') && /Promise/.test(l.error)),
    'the failure is logged',
  );
});

test('entity_attributes that leave async work behind do not hang the backend', async () => {
  // Regression (issue 13): under node:vm the pending job ran after the time limit, on the backend's
  // event loop, for ever.
  await survivesEntityAttributes('(async () => { await 0; for (;;) {} })(), true', 'a pending job');
});

test.run();
