// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { coreApi, fresh } from '../harness/api.ts';
import { pipelineKit } from '../harness/pipeline-kit.ts';
import { startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';
import { makeTestCerts, type TestCerts } from '../harness/certs.ts';
import { backendAgents, type CheckAgent } from './agent-checks/backend.ts';

// `secrets` with the `env` provider (docs/compatibility.md#secrets), end to end: two backends with the
// same environment, one whose agent port is TLS (wss) and one plain (ws). Handlers and mutators get the
// values in their environment; a check's command gets them only from the TLS backend; a missing
// variable is an error naming the secret. The values never show in logs (backends' and agents'), API
// answers or events.

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const OTHER = `oth-${randomBytes(12).toString('hex')}`;
const env = { SECRET_TEST_TOKEN: TOKEN, SECRET_TEST_OTHER: OTHER };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
/** The command prints a digest of $TOKEN, so the event shows whether it got the value without holding it. */
const DIGEST = `printf %s "$TOKEN" | sha256sum | cut -d' ' -f1`;

let certs: TestCerts;
let secure: Backend;
let plain: Backend;
let root: string;
const onSecure = backendAgents(() => secure);
const onPlain = backendAgents(() => plain);
let wssAgent: CheckAgent;
/** The same over protobuf payloads. */
let wssProtobuf: CheckAgent;
let wsAgent: CheckAgent;
const api = coreApi(() => secure);
const kit = pipelineKit(api, () => root);

test.before(async () => {
  certs = makeTestCerts();
  root = tempDir('secrets');
  [secure, plain] = await Promise.all([
    startBackend({
      name: 'secrets-tls',
      env,
      extraArgs: ['--agent-cert-file', certs.serverCert, '--agent-key-file', certs.serverKey],
    }),
    startBackend({ name: 'secrets-plain', env }),
  ]);
  for (const b of [onSecure, onPlain])
    await waitFor(async () => (await b.api('/namespaces')).status === 200, {
      timeoutMs: 10000,
      what: 'the admin API key to work',
    });
  wssAgent = await onSecure.agentOn(['--trusted-ca-file', certs.ca], secure.agentUrl.replace(/^ws:/, 'wss:'));
  wssProtobuf = await onSecure.agentOn(
    ['--trusted-ca-file', certs.ca, '--protobuf'],
    secure.agentUrl.replace(/^ws:/, 'wss:'),
  );
  wsAgent = await onPlain.agentOn();
});

test.after(async () => {
  await onSecure.stopAll();
  await onPlain.stopAll();
  await secure?.stop();
  await plain?.stop();
});

test('a pipe mutator and a pipe handler get their secrets in their environment', async () => {
  const dir = join(root, 'env-handler');
  await kit.put('mutators', 'secret-mutator', {
    command: `printf '{"from_mutator":"%s"}' "$M_TOKEN"`,
    secrets: [{ name: 'M_TOKEN', secret: 'SECRET_TEST_OTHER' }],
  });
  await kit.fileHandler('secret-handler', {
    mutator: 'secret-mutator',
    command: `mkdir -p ${dir} && printenv H_TOKEN > ${dir}/token && cat > ${dir}/payload`,
    secrets: [{ name: 'H_TOKEN', secret: 'SECRET_TEST_TOKEN' }],
  });
  await kit.postEvent(fresh('sec'), {
    metadata: { name: 'sec-handled' },
    status: 2,
    handlers: ['secret-handler'],
  });
  const payload = await waitFor(
    () => {
      try {
        return readFileSync(join(dir, 'payload'), 'utf8') || undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 15000, what: 'the handler to run' },
  );
  assert.equal(JSON.parse(payload), { from_mutator: OTHER });
  assert.is(readFileSync(join(dir, 'token'), 'utf8'), `${TOKEN}\n`);
});

test('a missing variable fails the handler and the mutator with a message naming the secret', async () => {
  await kit.fileHandler('missing-handler', { secrets: [{ name: 'H_TOKEN', secret: 'SECRET_TEST_NOPE' }] });
  await kit.put('mutators', 'missing-mutator', {
    command: 'cat',
    secrets: [{ name: 'M_TOKEN', secret: 'SECRET_TEST_NOPE2' }],
  });
  await kit.fileHandler('missing-mutated', { mutator: 'missing-mutator' });
  await kit.postEvent(fresh('sec'), {
    metadata: { name: 'sec-missing' },
    status: 2,
    handlers: ['missing-handler', 'missing-mutated'],
  });
  const failed = await waitFor(
    () => secure.logs().find((l) => l.msg === 'handler failed' && l.handler === 'missing-handler'),
    { timeoutMs: 15000, what: 'the handler failure' },
  );
  assert.is(
    failed.error,
    'secret H_TOKEN: the env provider has no variable SECRET_TEST_NOPE on this backend',
  );
  const mutator = await waitFor(
    () => secure.logs().find((l) => l.msg?.startsWith('mutator failed') && /M_TOKEN/.test(l.error)),
    { timeoutMs: 15000, what: 'the mutator failure' },
  );
  assert.match(
    mutator.error,
    'secret M_TOKEN: the env provider has no variable SECRET_TEST_NOPE2 on this backend',
  );
});

test("a secret never hands out the backend's own MONITOR_ configuration", async () => {
  const r = await api('/namespaces/default/handlers/monitor-var', 'PUT', {
    metadata: { name: 'monitor-var', namespace: 'default' },
    command: 'cat',
    secrets: [{ name: 'X', secret: 'MONITOR_API_PORT' }],
  });
  assert.ok(r.status === 201 || r.status === 200);
  await kit.postEvent(fresh('sec'), {
    metadata: { name: 'sec-monitor' },
    status: 2,
    handlers: ['monitor-var'],
  });
  const failed = await waitFor(
    () => secure.logs().find((l) => l.msg === 'handler failed' && l.handler === 'monitor-var'),
    { timeoutMs: 15000, what: 'the handler failure' },
  );
  assert.match(failed.error, "does not hand out the backend's own configuration (MONITOR_API_PORT)");
});

test('a check command gets its secret from a backend whose agent port is TLS (JSON and protobuf)', async () => {
  for (const [target, name] of [
    [wssAgent, 'sec-check-wss'],
    [wssProtobuf, 'sec-check-wss-pb'],
  ] as const) {
    const e = await onSecure.run(target, name, {
      command: DIGEST,
      secrets: [{ name: 'TOKEN', secret: 'SECRET_TEST_TOKEN' }],
    });
    assert.is(e.check.status, 0, name);
    assert.is(e.check.output.trim(), sha256(TOKEN), name);
    assert.equal(e.check.secrets, [{ name: 'TOKEN', secret: 'SECRET_TEST_TOKEN' }]);
  }
});

test('over plain ws the check runs without the secret, and the backend warns naming the check', async () => {
  const e = await onPlain.run(wsAgent, 'sec-check-ws', {
    command: DIGEST,
    secrets: [{ name: 'TOKEN', secret: 'SECRET_TEST_TOKEN' }],
  });
  assert.is(e.check.output.trim(), sha256(''), 'the command ran without $TOKEN');
  const warn = plain.logs().find((l) => l.check === 'sec-check-ws' && /only over TLS/.test(l.msg ?? ''));
  assert.ok(warn, 'the backend warned');
  assert.is(warn!.level, 'warn');
});

test('a check whose secret cannot be resolved is not run: status 3 naming the secret', async () => {
  for (const [b, target, name] of [
    [onSecure, wssAgent, 'sec-missing-wss'],
    [onSecure, wssProtobuf, 'sec-missing-wss-pb'],
    [onPlain, wsAgent, 'sec-missing-ws'],
  ] as const) {
    const e = await b.run(target, name, {
      command: 'touch /nonexistent-never-run; true',
      secrets: [{ name: 'TOKEN', secret: 'SECRET_TEST_ABSENT' }],
    });
    assert.is(e.check.status, 3, name);
    assert.is(
      e.check.output,
      'check secrets could not be resolved by the backend: secret TOKEN: the env provider has no variable SECRET_TEST_ABSENT on this backend',
    );
  }
});

test('the values are in no log, API answer or stored event', async () => {
  const answers: string[] = [];
  for (const b of [onSecure, onPlain])
    for (const path of [
      '/namespaces/default/events',
      '/namespaces/default/checks',
      '/namespaces/default/handlers',
      '/namespaces/default/mutators',
    ]) {
      const r = await b.api(path);
      assert.is(r.status, 200, path);
      answers.push(JSON.stringify(r.body));
    }
  const all = [
    ...answers,
    ...[secure, plain].map((b) => b.proc.lines().join('\n')),
    ...[wssAgent, wssProtobuf, wsAgent].map((a) => a.agent.proc.lines().join('\n')),
  ];
  assert.ok(all.join('').includes('SECRET_TEST_TOKEN'), 'the secrets are there, by variable name');
  for (const [i, text] of all.entries()) {
    assert.not.ok(text.includes(TOKEN), `output ${i} holds the token`);
    assert.not.ok(text.includes(OTHER), `output ${i} holds the other secret`);
  }
});

test.run();
