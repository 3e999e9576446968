// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startAgent, startBackend, waitFor, type AgentProc, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh, isError, type Body } from '../harness/api.ts';

// The check TTL (dead man's switch) through the REST API: a result with a ttl arms it, the failure
// result comes after ttl with the exact output and repeats every ttl; a new result re-arms; a result
// without ttl, a deleted event or a deleted entity disarms; ttl 1..4 is refused; a real agent whose
// keepalive fails suppresses it until the keepalive recovers.

let backend: Backend;
let agent: AgentProc | undefined;
const api = coreApi(() => backend);

const post = (entity: string, check: string, body: Body = {}) =>
  api(`/namespaces/default/events/${entity}/${check}`, 'POST', {
    check: { status: 0, output: 'ok', ...body },
  });
const eventOf = async (entity: string, check: string) => {
  const r = await api<Body>(`/namespaces/default/events/${entity}/${check}`);
  return r.status === 200 ? r.body : undefined;
};
const waitStatus = (entity: string, check: string, status: number, timeoutMs: number) =>
  waitFor(
    async () => {
      const e = await eventOf(entity, check);
      return e?.check?.status === status ? e : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `${entity}/${check} status ${status}` },
  );
const TTL_OUTPUT = /^Last check execution was (\d+) seconds ago$/;

test.before(async () => {
  backend = await startBackend({ name: 'ttl-1' });
});

test.after(async () => {
  await agent?.kill('SIGCONT').catch(() => {});
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

test('a result with ttl 5: the failure result comes after 5 s, exact output, merged into history, repeated every ttl', async () => {
  const entity = fresh('ttl-fire');
  const postedAt = Date.now();
  created(await post(entity, 'dms', { ttl: 5, interval: 2 }), 'POST');
  const first = await waitStatus(entity, 'dms', 1, 15000);
  const after = (Date.now() - postedAt) / 1000;
  assert.ok(after >= 4.5, `fired ${after}s after the result, before the ttl`);
  const n = Number(TTL_OUTPUT.exec(first.check.output)?.[1]);
  assert.ok(n >= 4 && n <= 8, `output "${first.check.output}"`);
  assert.is(first.check.state, 'failing');
  assert.is(first.check.ttl, 5);
  assert.equal(
    first.check.history.map((h: Body) => h.status),
    [0, 1],
  );
  assert.is(first.check.occurrences, 1);
  assert.is(first.check.occurrences_watermark, 1);
  assert.ok(first.check.executed >= Math.floor(postedAt / 1000) + 4, 'executed is the time of the expiry');
  assert.is(first.entity.metadata.name, entity);

  const second = await waitFor(
    async () => {
      const e = await eventOf(entity, 'dms');
      return e?.check?.history?.length === 3 ? e : undefined;
    },
    { timeoutMs: 12000, intervalMs: 100, what: 'the repeat after another ttl' },
  );
  assert.equal(
    second.check.history.map((h: Body) => h.status),
    [0, 1, 1],
  );
  assert.is(second.check.occurrences, 2);
  assert.match(second.check.output, TTL_OUTPUT);
  assert.ok(second.check.executed - first.check.executed >= 4, 'repeated about one ttl later');
  assert.ok(second.id !== first.id, 'each failure result is a new event');

  // A new result makes it pass again, and the switch re-armed from it.
  created(await post(entity, 'dms', { ttl: 5 }), 'POST recovery');
  const ok = await eventOf(entity, 'dms');
  assert.is(ok!.check.status, 0);
  assert.is(ok!.check.state, 'passing');
});

test('a new result re-arms the switch', async () => {
  const entity = fresh('ttl-rearm');
  created(await post(entity, 'dms', { ttl: 6 }), 'POST 1');
  await sleep(3500);
  const rearmedAt = Date.now();
  created(await post(entity, 'dms', { ttl: 6 }), 'POST 2');
  // Past the first deadline, before the second.
  await sleep(4000);
  const mid = await eventOf(entity, 'dms');
  assert.is(mid!.check.status, 0, 'the first deadline no longer holds');
  await waitStatus(entity, 'dms', 1, 10000);
  const after = (Date.now() - rearmedAt) / 1000;
  assert.ok(after >= 5.5, `fired ${after}s after the second result`);
});

test('no ttl, ttl 0, a deleted event or a deleted entity disarms the switch', async () => {
  const noTtl = fresh('ttl-none');
  const zero = fresh('ttl-zero');
  const delEvent = fresh('ttl-del-ev');
  const delEntity = fresh('ttl-del-ent');
  for (const e of [noTtl, zero, delEvent, delEntity]) created(await post(e, 'dms', { ttl: 5 }), `POST ${e}`);
  created(await post(noTtl, 'dms', {}), 'POST without ttl');
  created(await post(zero, 'dms', { ttl: 0 }), 'POST ttl 0');
  assert.is((await api(`/namespaces/default/events/${delEvent}/dms`, 'DELETE')).status, 204);
  assert.is((await api(`/namespaces/default/entities/${delEntity}`, 'DELETE')).status, 204);
  await sleep(8000);
  for (const e of [noTtl, zero]) {
    const ev = await eventOf(e, 'dms');
    assert.is(ev!.check.status, 0, `${e} stayed passing`);
    assert.equal(
      ev!.check.history.map((h: Body) => h.status),
      [0, 0],
    );
  }
  assert.is(await eventOf(delEvent, 'dms'), undefined, 'the deleted event stays deleted');
  assert.is(await eventOf(delEntity, 'dms'), undefined, "the deleted entity's event stays deleted");
  assert.is((await api(`/namespaces/default/entities/${delEntity}`)).status, 404);
});

test('ttl 1..4 is refused with a clear 400; ttl "x" too', async () => {
  const entity = fresh('ttl-bad');
  for (const ttl of [1, 4]) {
    const r = await post(entity, 'dms', { ttl });
    isError(r, 400, `ttl ${ttl}`);
    assert.match(r.body.message, /ttl must be 0 \(off\) or at least 5 seconds/);
  }
  isError(await post(entity, 'dms', { ttl: 'x' }), 400, 'ttl "x"');
  assert.is(await eventOf(entity, 'dms'), undefined);
  created(await post(entity, 'dms', { ttl: -1 }), 'a negative ttl is off');
  // The backend still serves.
  assert.is((await api('/namespaces/default/events')).status, 200);
});

test("suppressed while the entity's keepalive is failing, fires again once it recovers", async () => {
  const name = fresh('ttl-agent');
  agent = await startAgent({ name, backendUrls: [backend.agentUrl], keepaliveInterval: 1, warning: 5 });
  await waitStatus(name, 'keepalive', 0, 20000);
  await agent.kill('SIGSTOP');
  const postedAt = Date.now();
  created(await post(name, 'dms', { ttl: 10 }), 'POST');
  await waitStatus(name, 'keepalive', 1, 15000);
  // Well past the TTL deadline: the keepalive alert stands for the entity, the TTL stays quiet.
  await sleep(Math.max(0, postedAt + 13000 - Date.now()));
  const during = await eventOf(name, 'dms');
  assert.is(during!.check.status, 0, 'no TTL failure while the keepalive fails');
  assert.equal(
    during!.check.history.map((h: Body) => h.status),
    [0],
  );

  // The switch was re-armed, not buried: once the agent is back, the silent check is reported.
  await agent.kill('SIGCONT');
  await waitStatus(name, 'keepalive', 0, 20000);
  const fired = await waitStatus(name, 'dms', 1, 20000);
  assert.match(fired.check.output, TTL_OUTPUT);
  assert.equal(
    fired.check.history.map((h: Body) => h.status),
    [0, 1],
  );
});

test("results an agent sends arm the switch too; the agent's API refuses ttl 1..4", async () => {
  const name = agent!.name;
  const toAgent = (check: Body) =>
    fetch(`${agent!.apiUrl}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ check }),
    });
  const bad = await toAgent({ metadata: { name: 'agent-dms' }, status: 0, output: 'ok', ttl: 3 });
  assert.is(bad.status, 400);
  assert.match(await bad.text(), /ttl must be 0 \(off\) or at least 5 seconds/);
  const sentAt = Date.now();
  const ok = await toAgent({ metadata: { name: 'agent-dms' }, status: 0, output: 'ok', ttl: 5 });
  assert.ok(ok.status < 300, `agent API answered ${ok.status}`);
  await waitStatus(name, 'agent-dms', 0, 10000);
  const fired = await waitStatus(name, 'agent-dms', 1, 15000);
  assert.ok((Date.now() - sentAt) / 1000 >= 4.5, 'not before the ttl');
  assert.match(fired.check.output, TTL_OUTPUT);
});

test.run();
