// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { legacyApi } from '../harness/legacy.ts';
import { coreApi, created, type Body } from '../harness/api.ts';
import { startBackend, startLegacyClient, waitFor, type Backend, type AgentProc } from '../harness/index.ts';

// Checks run by a legacy client (docs/compatibility.md#legacy-client), requested by a real backend: tokens
// from the client definition, unmatched tokens, safe mode, local definitions merged over requests, stdin,
// timeout, hooks by status and severity name, and standalone checks on the client's own schedule.

let backend: Backend;
const clients: AgentProc[] = [];
const api = coreApi(() => backend);
const legacy = legacyApi(() => backend);

const LOCAL_CHECKS = {
  merged: { command: 'echo local :::team:::', handler: 'mail', owner: 'db-team' },
  piped: { command: 'cat', stdin: true },
  hooked: {
    command: 'echo failing; exit 2',
    hooks: { '2': { command: 'echo two :::name:::' }, critical: { command: 'echo crit' } },
  },
  'hooked-severity': {
    command: 'exit 1',
    hooks: { '2': { command: 'echo two' }, warning: { command: 'echo warned :::nope:::' } },
  },
  alone: { command: 'echo alone :::name:::', standalone: true, interval: 2 },
};

test.before(async () => {
  backend = await startBackend({ name: 'legacy-client-checks' });
  clients.push(
    await startLegacyClient({
      name: 'lc-tokens',
      backendUrls: [backend.agentUrl],
      client: {
        subscriptions: ['tok'],
        team: 'ops',
        disk: { warning: 80 },
        service: { password: 'hunter2' },
      },
      checks: LOCAL_CHECKS,
    }),
    await startLegacyClient({
      name: 'lc-safe',
      backendUrls: [backend.agentUrl],
      client: { subscriptions: ['safe'], safe_mode: true },
      checks: { allowed: { command: 'echo allowed here' } },
    }),
  );
  for (const name of ['lc-tokens', 'lc-safe'])
    await waitFor(async () => (await api(`/namespaces/default/entities/${name}`)).status === 200, {
      timeoutMs: 20_000,
      what: `entity ${name}`,
    });
});

test.after(async () => {
  for (const c of clients) await c.kill().catch(() => {});
  await backend?.stop();
});

/** Creates an unpublished check and runs it once (ad hoc); resolves with the client's event of it. */
async function runOnce(client: string, name: string, body: Body): Promise<Body> {
  created(
    await api('/namespaces/default/checks', 'POST', {
      metadata: { name, namespace: 'default' },
      interval: 60,
      publish: false,
      ...body,
    }),
    `create ${name}`,
  );
  const r = await api<Body>(`/namespaces/default/checks/${name}/execute`, 'POST', { check: name });
  assert.is(r.status, 202, `execute ${name}: ${JSON.stringify(r.body)}`);
  return waitFor(
    async () => {
      const e = await api<Body>(`/namespaces/default/events/${client}/${name}`);
      return e.status === 200 && e.body.check.issued === r.body.issued ? e.body.check : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 200, what: `the result of ${name} on ${client}` },
  );
}

test('tokens come from the client definition, custom attributes included; the command is kept as written', async () => {
  const command = 'echo :::name::: :::team::: :::disk.warning::: :::missing|dflt::: :::service.password:::';
  const c = await runOnce('lc-tokens', 'tokens', { command, subscriptions: ['tok'] });
  assert.is(c.output, 'lc-tokens ops 80 dflt hunter2\n');
  assert.is(c.status, 0);
  assert.is(c.command, command, 'the unsubstituted command: a secret a token fills in is not published');
});

test('unmatched tokens: the command is not run; status 3, handle false, the unmatched list', async () => {
  const c = await runOnce('lc-tokens', 'unmatched', {
    command: 'echo ran :::nonexistent::: :::team.x::: :::nonexistent:::',
    subscriptions: ['tok'],
  });
  assert.is(c.output, 'Unmatched client token(s): nonexistent, team.x');
  assert.is(c.status, 3);
  assert.is(c.handle, false);
});

test('safe mode: a check the client does not define is refused; a defined one runs its definition', async () => {
  const refused = await runOnce('lc-safe', 'not-here', { command: 'echo ran', subscriptions: ['safe'] });
  assert.is(refused.output, 'Check is not locally defined (safe mode)');
  assert.is(refused.status, 3);
  assert.is(refused.handle, false);
  const allowed = await runOnce('lc-safe', 'allowed', { command: 'echo remote', subscriptions: ['safe'] });
  assert.is(allowed.output, 'allowed here\n');
  assert.is(allowed.status, 0);
});

test('a local definition is merged over the request', async () => {
  const c = await runOnce('lc-tokens', 'merged', {
    command: 'echo remote',
    subscriptions: ['tok'],
    handlers: ['slack'],
  });
  assert.is(c.output, 'local ops\n');
  assert.is(c.command, 'echo local :::team:::');
  assert.equal(c.handlers, ['mail']);
  assert.is(c.owner, 'db-team', 'custom attributes of the definition travel');
});

test('stdin: the command reads {client, check} in the legacy shape', async () => {
  const c = await runOnce('lc-tokens', 'piped', { command: 'ignored', subscriptions: ['tok'] });
  const got = JSON.parse(c.output);
  assert.is(got.client.name, 'lc-tokens');
  assert.is(got.client.team, 'ops');
  assert.ok(got.client.subscriptions.includes('tok'));
  assert.is(got.check.name, 'piped');
  assert.is(got.check.command, 'cat');
  assert.is(got.check.issued, c.issued);
  assert.is(got.check.metadata, undefined);
});

test('timeout: "Execution timed out", status 2', async () => {
  const c = await runOnce('lc-tokens', 'slow', { command: 'sleep 10', timeout: 1, subscriptions: ['tok'] });
  assert.is(c.status, 2);
  assert.match(c.output, /^Execution timed out/);
});

test('hooks: by "<status>" first, else the severity name; the run inside check.hooks.<key>', async () => {
  const byStatus = await runOnce('lc-tokens', 'hooked', { command: 'x', subscriptions: ['tok'] });
  assert.is(byStatus.status, 2);
  assert.is(byStatus.hooks['2'].output, 'two lc-tokens\n');
  assert.is(byStatus.hooks['2'].status, 0);
  assert.is(byStatus.hooks['2'].command, 'echo two :::name:::');
  assert.type(byStatus.hooks['2'].executed, 'number');
  assert.type(byStatus.hooks['2'].duration, 'number');
  assert.equal(byStatus.hooks.critical, { command: 'echo crit' }, 'only one hook runs');
  const bySeverity = await runOnce('lc-tokens', 'hooked-severity', { command: 'x', subscriptions: ['tok'] });
  assert.is(bySeverity.status, 1);
  assert.is(
    bySeverity.hooks.warning.output,
    'Unmatched client token(s): nope',
    'a hook with an unmatched token',
  );
  assert.is(bySeverity.hooks.warning.status, 3);
  assert.equal(bySeverity.hooks['2'], { command: 'echo two' });
});

test('standalone checks run on the client schedule; results in the legacy API /results/<client>/<check>', async () => {
  const issued: number[] = [];
  await waitFor(
    async () => {
      const r = await legacy<Body>('/results/lc-tokens/alone');
      if (r.status !== 200) return false;
      assert.is(r.body.check.output, 'alone lc-tokens\n');
      if (!issued.includes(r.body.check.issued)) issued.push(r.body.check.issued);
      return issued.length >= 3;
    },
    { timeoutMs: 15_000, intervalMs: 250, what: 'three runs of the standalone check' },
  );
  for (let i = 1; i < issued.length; i++) assert.is(issued[i]! - issued[i - 1]!, 2, `every 2 s: ${issued}`);
  assert.is((await api(`/namespaces/default/checks/alone`)).status, 404, 'no check of the backend');
});

test.run();
