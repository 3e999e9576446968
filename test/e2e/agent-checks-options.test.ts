// suite-timeout: 180
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startAgent, startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';
import { fresh } from '../harness/api.ts';
import { backendAgents } from './agent-checks/backend.ts';
import { checkAgents, PLUGINS, run as standInRun } from './agent-checks/stand-in.ts';

// Checks on agents started for one test each, connected to a real backend that schedules them
// (test/e2e/agent-checks/backend.ts: created and executed through the REST API, the event read back
// through it): the allow list (--allow-list) and a bad one, --disable-assets, stopping an agent while
// a check runs. The protobuf test keeps the backend stand-in of test/e2e/agent-checks/stand-in.ts:
// it checks that secrets cross the wire, and a real backend sends secrets only to agents on wss
// (e2e/secrets.test.ts), which this one is not. The checks of an agent with no such option are in agent-checks.test.ts.

let backend: Backend;
const real = backendAgents(() => backend);
const { agentOn, put, run } = real;
const standIns = checkAgents();

test.before(async () => {
  backend = await startBackend({ name: 'agent-checks-options' });
  await waitFor(async () => (await real.api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await real.stopAll();
  await standIns.stopAll();
  await backend?.stop();
});

test('allow list: allowed by exec+args and sha512, denied otherwise (status 3), env_vars only with enable_env', async () => {
  const dir = tempDir('allow-list');
  const dummy = `${PLUGINS}/check_dummy`;
  const sum = createHash('sha512').update(readFileSync(dummy)).digest('hex');
  const file = join(dir, 'allow.yaml');
  writeFileSync(
    file,
    [
      `- exec: ${dummy}`,
      `  args: ["0", "allowed"]`,
      `  sha512: ${sum}`,
      `- exec: /bin/true`,
      `  args: []`,
      `  sha512: "${'0'.repeat(128)}"`,
      `- exec: printenv`,
      `  args: [FOO]`,
      `- exec: sh`,
      `  args: ["-c", "'printenv FOO'"]`,
      `  enable_env: true`,
    ].join('\n'),
  );
  const t = await agentOn(['--allow-list', file]);
  const ok = await run(t, 'allowed', { command: `${dummy} 0 allowed` });
  assert.is(ok.check.status, 0);
  assert.is(ok.check.output, 'OK: allowed\n');
  for (const [name, command] of [
    ['other-args', `${dummy} 2 allowed`],
    ['not-listed', 'echo hi'],
    ['bad-sha', '/bin/true'],
    ['chained', `${dummy} 0 allowed; rm -rf /tmp/x`],
  ]) {
    const e = await run(t, name!, { command });
    assert.is(e.check.status, 3, name);
    assert.is(e.check.output, 'check command denied by the agent allow list', name);
  }
  const custom = await run(t, 'deny-status', {
    metadata: { name: 'deny-status', annotations: { allow_list_on_deny_status: '1' } },
    command: 'echo hi',
  });
  assert.is(custom.check.status, 1, 'allow_list_on_deny_status annotation');
  const noEnv = await run(t, 'no-env', { command: 'printenv FOO', env_vars: ['FOO=bar'] });
  assert.is(noEnv.check.status, 1, 'env_vars dropped without enable_env');
  const withEnv = await run(t, 'with-env', { command: "sh -c 'printenv FOO'", env_vars: ['FOO=bar'] });
  assert.is(withEnv.check.output, 'bar\n');
  await put('hooks', 'h', { command: 'id' });
  const hooked = await run(t, 'denied-hook', {
    command: `${dummy} 0 allowed`,
    check_hooks: [{ type: 'ok', hooks: ['h'] }],
  });
  assert.is(hooked.check.hooks[0].status, 3);
  assert.match(hooked.check.hooks[0].output, /denied by the agent allow list/);
});

test('a bad allow-list file stops the agent at start with one clear line and exit code 2', async () => {
  const dir = tempDir('allow-bad');
  for (const [file, text, says] of [
    ['bad.json', '{"exec": "x"}', /invalid allow list .*bad\.json/],
    ['broken.json', '[{', /not valid JSON/],
    ['entries.yaml', '- args: [a]', /invalid allow list .*exec/],
    ['missing.yaml', undefined, /cannot read allow list/],
  ] as const) {
    const path = join(dir, file);
    if (text !== undefined) writeFileSync(path, text);
    const a = await startAgent({
      name: fresh('allow-bad'),
      backendUrls: 'ws://127.0.0.1:1',
      extraArgs: ['--allow-list', path],
    });
    standIns.track(a);
    const exit = await waitFor(() => a.proc.exit, { timeoutMs: 15000, what: 'agent exit' });
    assert.is(exit.code, 2, a.proc.tail(5));
    assert.ok(
      a.proc.lines().some((l) => says.test(l)),
      a.proc.tail(5),
    );
  }
});

test('--disable-assets: a check that needs assets gives status 3 saying assets are disabled', async () => {
  const t = await agentOn(['--disable-assets']);
  await put('assets', 'my-tool', { url: 'http://127.0.0.1:1/x.tar.gz', sha512: 'a'.repeat(128) });
  const e = await run(t, 'needs-asset', { command: 'echo hi', runtime_assets: ['my-tool'] });
  assert.is(e.check.status, 3);
  assert.match(e.check.output, /assets are disabled on this agent/);
  const plain = await run(t, 'no-asset', { command: 'echo hi' });
  assert.is(plain.check.output, 'hi\n');
});

test('stopping the agent kills running checks (their process groups) and drops their results', async () => {
  const t = await agentOn();
  const marker = join(tempDir('checks-stop'), 'survived');
  // Returns once the agent has logged that it accepted the request.
  await real.execute(t, 'long', { command: `sleep 3; touch ${marker}` });
  await sleep(300);
  const started = Date.now();
  const exit = await t.agent.stop(8000);
  assert.is(exit.code, 0, t.agent.proc.tail(10));
  assert.ok(Date.now() - started < 5000);
  assert.ok(
    t.agent.proc.lines().some((l) => l.includes('check cancelled: the agent is stopping')),
    t.agent.proc.tail(10),
  );
  await sleep(3500);
  assert.throws(() => readFileSync(marker), 'the command was killed');
  const stored = await real.api(`/namespaces/default/events/${t.agent.name}/long`);
  assert.is(stored.status, 404, `no result stored: ${JSON.stringify(stored.body)}`);
});

test('protobuf: check_hooks, hooks, secrets and the hook results cross the wire', async () => {
  const t = await standIns.agentWith(['--protobuf'], true);
  const e = await standInRun(
    t,
    'pb-hooked',
    { command: `${PLUGINS}/check_dummy 2 down`, check_hooks: [{ type: 'critical', hooks: ['pb-hook'] }] },
    {
      hooks: [{ metadata: { name: 'pb-hook' }, command: 'echo "hook $TOKEN"', timeout: 5 }],
      secrets: ['TOKEN=t0k'],
    },
  );
  assert.is(e.check.status, 2);
  assert.is(e.check.output, 'CRITICAL: down\n');
  assert.is(e.check.hooks.length, 1);
  assert.is(e.check.hooks[0].metadata.name, 'pb-hook', 'the hook configuration is inline, as in Sensu');
  assert.is(e.check.hooks[0].command, 'echo "hook $TOKEN"');
  assert.is(e.check.hooks[0].output, 'hook \n', 'secrets are for the check command, not its hooks');
  assert.is(e.check.hooks[0].status, 0);
  assert.equal(e.check.check_hooks, [{ hooks: ['pb-hook'], type: 'critical' }]);
});

test.run();
