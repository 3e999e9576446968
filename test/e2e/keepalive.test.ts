// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startAgent, startBackend, waitFor, type AgentProc, type Backend } from '../harness/index.ts';

// A backend with embedded etcd and NATS and a real agent: registration, the OK keepalive, the
// warning and critical alerts when the agent goes silent, and recovery when it comes back.

const AGENT = 'e2e-agent';
const WARNING = 5;
const CRITICAL = 10;
let backend: Backend;
let agent: AgentProc | undefined;

const keepalive = async () => await backend.get(`/api/core/v2/namespaces/default/events/${AGENT}/keepalive`);

async function waitForStatus(status: number, timeoutMs: number) {
  return waitFor(
    async () => {
      const r = await keepalive();
      return r.status === 200 && r.body.check.status === status ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `keepalive status ${status}` },
  );
}

const startOurAgent = () =>
  startAgent({
    name: AGENT,
    backendUrls: [backend.agentUrl],
    subscriptions: ['linux', 'web'],
    keepaliveInterval: 1,
    warning: WARNING,
    critical: CRITICAL,
  });

test.before(async () => {
  backend = await startBackend({ name: 'e2e-1' });
});

test.after(async () => {
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

test('the agent registers and its OK keepalive appears', async () => {
  agent = await startOurAgent();
  const entity = await waitFor(
    async () => {
      const r = await backend.get(`/api/core/v2/namespaces/default/entities/${AGENT}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 20000, what: 'the entity' },
  );
  assert.is(entity.entity_class, 'agent');
  assert.is(entity.metadata.name, AGENT);
  assert.is(entity.metadata.namespace, 'default');
  assert.equal(entity.subscriptions, ['linux', 'web', `entity:${AGENT}`]);
  assert.ok(entity.last_seen > 0);
  assert.is(entity.user, 'agent');

  const ev = await waitForStatus(0, 10000);
  assert.match(
    ev.check.output,
    new RegExp(
      `^Keepalive last sent from ${AGENT} at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\+0000 UTC$`,
    ),
  );
  assert.is(ev.check.interval, 1);
  assert.is(ev.check.timeout, WARNING);
  assert.is(ev.check.ttl, CRITICAL);
  assert.equal(ev.check.handlers, ['keepalive']);
  assert.is(ev.check.state, 'passing');
  assert.is(ev.entity.metadata.name, AGENT);

  const list = await backend.get('/api/core/v2/namespaces/default/entities');
  assert.ok(list.body.some((e: { metadata: { name: string } }) => e.metadata.name === AGENT));
  const events = await backend.get(`/api/core/v2/namespaces/default/events/${AGENT}`);
  assert.equal(
    events.body.map((e: { check: { metadata: { name: string } } }) => e.check.metadata.name),
    ['keepalive'],
  );
});

test('a killed agent turns to warning after the warning timeout, then critical', async () => {
  await agent!.kill();
  const killedAt = Date.now();
  agent = undefined;
  const warn = await waitForStatus(1, (WARNING + 10) * 1000);
  const warnAfter = (Date.now() - killedAt) / 1000;
  assert.ok(warnAfter >= WARNING - 1.5, `warning came ${warnAfter}s after the kill, before the timeout`);
  assert.match(
    warn.check.output,
    new RegExp(`^No keepalive sent from ${AGENT} for \\d+ seconds \\(>= ${WARNING}\\)$`),
  );
  assert.is(warn.check.state, 'failing');

  const crit = await waitForStatus(2, (CRITICAL + 10) * 1000);
  const critAfter = (Date.now() - killedAt) / 1000;
  assert.ok(critAfter >= CRITICAL - 1.5, `critical came ${critAfter}s after the kill`);
  assert.match(
    crit.check.output,
    new RegExp(`^No keepalive sent from ${AGENT} for \\d+ seconds \\(>= ${CRITICAL}\\)$`),
  );
  const silent = Number(/for (\d+) seconds/.exec(crit.check.output)![1]);
  assert.ok(silent >= CRITICAL, `silence of ${silent}s reported`);
});

test('the agent comes back and the keepalive returns to OK', async () => {
  agent = await startOurAgent();
  const ok = await waitForStatus(0, 20000);
  const statuses = ok.check.history.map((h: { status: number }) => h.status);
  // The story of this check: OKs, the warning, the critical, and OK again.
  assert.ok(
    statuses.indexOf(1) > 0 &&
      statuses.indexOf(2) > statuses.indexOf(1) &&
      statuses.lastIndexOf(0) > statuses.indexOf(2),
    `history ${statuses}`,
  );
  assert.is(ok.check.state, 'passing');
  assert.is(ok.check.occurrences, 1);
});

test.run();
