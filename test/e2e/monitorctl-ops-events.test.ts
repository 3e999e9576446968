// suite-timeout: 240
import * as assert from 'uvu/assert';
import { test } from '../harness/uvu.ts';
import {
  ADMIN,
  adminAuth,
  CtlHome,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
  type CtlResult,
} from '../harness/index.ts';

// monitorctl's operation commands on checks, events and entities against a real backend and a real
// agent: check execute with --subscriptions and --reason runs on the agent; the event it makes is
// listed, shown, resolved by hand and deleted; entity update by flags; the exit status of bad input.

let backend: Backend;
let agent: AgentProc;
const home = new CtlHome();
const AGENT = 'ctl-ops-agent';

test.before(async () => {
  backend = await startBackend({ name: 'ctl-ops-ev', logLevel: 'warn' });
  const r = await home.run(['configure', '-n', '--url', backend.apiUrl, '--api-key', ADMIN.apiKey]);
  assert.is(r.code, 0, r.stderr);
  agent = await startAgent({
    name: AGENT,
    backendUrls: [backend.agentUrl],
    subscriptions: ['linux'],
    keepaliveInterval: 5,
    warning: 20,
    logLevel: 'warn',
  });
  await waitFor(async () => (await api(`/namespaces/default/entities/${AGENT}`)).status === 200, {
    timeoutMs: 20000,
    what: `entity ${AGENT}`,
  });
});

test.after(async () => {
  await agent?.stop();
  await backend?.stop();
});

const api = (path: string) => backend.get(`/api/core/v2${path}`, { headers: adminAuth });

const ok = (args: string[], input?: string) => home.ok(args, input);
const json = (args: string[]) => home.json(args);
const fails = (code: number, args: string[]): Promise<CtlResult> =>
  home.expect(code, args, { oneLine: true });
const eventOf = async (check: string) => {
  const r = await api(`/namespaces/default/events/${AGENT}/${check}`);
  return r.status === 200 ? r.body : undefined;
};

test('check execute: --subscriptions sends an unpublished check to a real agent, which runs it', async () => {
  // Its own subscription reaches no agent: only the one given to execute does.
  await ok([
    'check',
    'create',
    'crit',
    '--command',
    'echo CRITICAL: disk full; exit 2',
    '--interval',
    '3600',
    '--subscriptions',
    'nowhere',
    '--publish',
    'false',
  ]);
  const out = await ok(['check', 'execute', 'crit', '--subscriptions', 'linux', '--reason', 'ops test']);
  assert.match(
    out,
    'Requested check "crit" in namespace "default" on subscriptions linux, reason "ops test"',
  );
  const e = await waitFor(() => eventOf('crit'), { timeoutMs: 20000, what: 'event of crit' });
  assert.is(e.check.status, 2);
  assert.match(e.check.output, /CRITICAL: disk full/);
  // Other formats print the request, with the time the API issued it.
  const req = await json(['check', 'execute', 'crit', '--subscriptions', 'linux,other', '--reason', 'again']);
  assert.is(req.check, 'crit');
  assert.equal(req.subscriptions, ['linux', 'other']);
  assert.is(req.reason, 'again');
  assert.is(req.namespace, 'default');
  assert.ok(Math.abs(req.issued - Date.now() / 1000) < 60, String(req.issued));
});

test("check execute without --subscriptions uses the check's own", async () => {
  await ok([
    'check',
    'create',
    'hello',
    '--command',
    'echo hello',
    '--interval',
    '3600',
    '--subscriptions',
    'linux',
    '--publish',
    'false',
  ]);
  assert.match(
    await ok(['check', 'execute', 'hello']),
    /Requested check "hello" in namespace "default" on its subscriptions\n/,
  );
  const e = await waitFor(() => eventOf('hello'), { timeoutMs: 20000, what: 'event of hello' });
  assert.is(e.check.status, 0);
});

test('event list and info show the critical event (tabular, json, field selector)', async () => {
  const table = await ok(['event', 'list']);
  assert.match(table, new RegExp(`${AGENT}\\s+crit\\s+CRITICAL: disk full\\s+2`));
  const failing = await json(['event', 'list', '--field-selector', 'check.status != 0']);
  assert.equal(
    failing.map((e: any) => e.check.metadata.name),
    ['crit'],
  );
  const one = await json(['event', 'info', AGENT, 'crit']);
  assert.is(one.check.status, 2);
  assert.match(await ok(['event', 'info', AGENT, 'crit']), /Status:\s+2/);
});

test('event resolve: the API then shows the event with status 0 and the manual output', async () => {
  const before = await eventOf('crit');
  assert.match(
    await ok(['event', 'resolve', AGENT, 'crit']),
    `Resolved event "${AGENT}/crit" in namespace "default"`,
  );
  const after = await eventOf('crit');
  assert.is(after.check.status, 0);
  assert.is(after.check.output, 'Resolved manually by monitorctl');
  assert.is(after.check.state, 'passing');
  assert.ok(after.check.executed >= before.check.executed);
  assert.is(after.check.history.at(-1).status, 0, JSON.stringify(after.check.history));
  assert.equal(await json(['event', 'list', '--field-selector', 'check.status != 0']), []);
});

test('event delete removes the event; info and resolve of it then exit 3', async () => {
  assert.match(await ok(['event', 'delete', AGENT, 'crit', '--skip-confirm']), /Deleted event/);
  assert.is(await eventOf('crit'), undefined);
  const gone = await fails(3, ['event', 'info', AGENT, 'crit']);
  assert.match(gone.stderr, /^Error: event "ctl-ops-agent\/crit" in namespace "default": resource not found/);
  const r = await fails(3, ['event', 'resolve', AGENT, 'crit']);
  assert.match(r.stderr, /event "ctl-ops-agent\/crit" in namespace "default"/);
});

test('entity update by flags: subscriptions replaced, labels added', async () => {
  await ok(['entity', 'update', AGENT, '--subscriptions', 'linux,web', '--label', 'tier=front']);
  const e = await json(['entity', 'info', AGENT]);
  assert.ok(e.subscriptions.includes('web'), JSON.stringify(e.subscriptions));
  assert.ok(e.subscriptions.includes('linux'));
  assert.is(e.metadata.labels.tier, 'front');
});

test('bad input: missing arguments exit 2, an unknown check 3, each with one line', async () => {
  await fails(2, ['event', 'resolve', AGENT]);
  await fails(2, ['check', 'execute']);
  await fails(2, ['check', 'execute', 'crit', '--subscriptions', ',']);
  const r = await fails(3, ['check', 'execute', 'no-such-check']);
  assert.match(r.stderr, /^Error: check "no-such-check" in namespace "default": /);
  await fails(2, ['event', 'resolve', '--bogus-flag', AGENT, 'x']);
});

test('--help of every new command', async () => {
  for (const args of [
    ['event', 'resolve'],
    ['check', 'execute'],
    ['entity', 'update'],
  ]) {
    const out = await ok([...args, '--help']);
    assert.match(out, `Usage: monitorctl ${args.join(' ')}`);
  }
});

test.run();
