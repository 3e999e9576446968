// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { Proc, startAgent, startBackend, waitFor, type AgentProc, type Backend } from '../harness/index.ts';
import { BACKEND_BIN } from '../harness/backend.ts';
import { AGENT_BIN } from '../harness/agent.ts';
import { issueClientCert, makeTestCerts, type TestCerts } from '../harness/certs.ts';

// The agent port over TLS (wss): server trust on the agent side, mutual TLS with the certificate's
// CN as the user, and the chain rule (docs/compatibility.md#tls-certificate-chains) with its exact error
// text.

const NOT_TRUSTED = 'certificate not signed by trusted authority';
let certs: TestCerts;
let backend: Backend | undefined;
const agents: AgentProc[] = [];

const wssUrl = (b: Backend) => b.agentUrl.replace(/^ws:/, 'wss:');

async function agent(name: string, extraArgs: string[], password?: string): Promise<AgentProc> {
  const a = await startAgent({ name, backendUrls: [wssUrl(backend!)], extraArgs, password });
  agents.push(a);
  return a;
}

async function stopAgent(a: AgentProc): Promise<void> {
  agents.splice(agents.indexOf(a), 1);
  await a.stop();
}

const keepaliveOf = (name: string) =>
  waitFor(
    async () => {
      const r = await backend!.get(`/api/core/v2/namespaces/default/events/${name}/keepalive`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 20_000, what: `the keepalive of ${name}` },
  );

/** The agent's log line for a failed connection attempt. */
const failedAttempt = (a: AgentProc) =>
  a.proc
    .waitForLine((l) => l.includes('backend connection failed'), 20_000)
    .then((l) => JSON.parse(l) as Record<string, any>);

async function registered(name: string): Promise<boolean> {
  const r = await backend!.get(`/api/core/v2/namespaces/default/entities/${name}`);
  return r.status === 200;
}

async function run(
  bin: string,
  args: string[],
  env?: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const p = Proc.start('cli', bin, args, { env });
  const exit = await p.exited;
  return { code: exit.code, stderr: p.lines('stderr').join('\n') };
}

test.before(async () => {
  certs = makeTestCerts();
  // Client certificates are asked for but optional here: Basic credentials must keep working.
  backend = await startBackend({
    name: 'tls-1',
    extraArgs: [
      '--agent-cert-file',
      certs.serverCert,
      '--agent-key-file',
      certs.serverKey,
      '--agent-trusted-ca-file',
      certs.ca,
    ],
  });
});

test.after(async () => {
  for (const a of agents.splice(0)) await a.stop().catch(() => {});
  await backend?.stop();
});

test('with --trusted-ca-file the agent registers over wss with Basic credentials', async () => {
  const a = await agent('tls-trusted', ['--trusted-ca-file', certs.ca]);
  const ev = await keepaliveOf('tls-trusted');
  assert.is(ev.check.status, 0);
  await stopAgent(a);
});

test('a backend certificate the agent does not trust: no connection, and the log says why', async () => {
  const a = await agent('tls-untrusted', ['--trusted-ca-file', certs.otherCa]);
  const line = await failedAttempt(a);
  assert.is(line.reason, NOT_TRUSTED);
  assert.ok(line.tls_error, "the log keeps TLS's own words too");
  assert.is(await registered('tls-untrusted'), false);
  await stopAgent(a);
});

test('with no trusted CA at all the agent refuses the test backend too', async () => {
  const a = await agent('tls-default-trust', []);
  assert.is((await failedAttempt(a)).reason, NOT_TRUSTED);
  await stopAgent(a);
});

test('--insecure-skip-tls-verify connects to an untrusted backend', async () => {
  const a = await agent('tls-insecure', ['--insecure-skip-tls-verify']);
  await keepaliveOf('tls-insecure');
  await stopAgent(a);
});

test('optional client certificate: a leaf-first chain connects with no password', async () => {
  const a = await agent(
    'mtls-optional',
    ['--trusted-ca-file', certs.ca, '--cert-file', certs.clientChain, '--key-file', certs.clientKey],
    'not-the-password',
  );
  await keepaliveOf('mtls-optional');
  await stopAgent(a);
});

test('mutual TLS: a leaf-first chain connects with no password; the CN is the user', async () => {
  await backend!.stop();
  backend = await startBackend({
    name: 'tls-2',
    extraArgs: [
      '--agent-cert-file',
      certs.serverCert,
      '--agent-key-file',
      certs.serverKey,
      '--agent-trusted-ca-file',
      certs.ca,
      '--agent-client-cert-auth',
    ],
  });
  // A wrong password proves it is not used: with a client certificate no Basic credentials are sent.
  const a = await agent(
    'mtls-chain',
    ['--trusted-ca-file', certs.ca, '--cert-file', certs.clientChain, '--key-file', certs.clientKey],
    'not-the-password',
  );
  await keepaliveOf('mtls-chain');
  await stopAgent(a);
});

test('mutual TLS: the leaf alone is refused with the exact text', async () => {
  const a = await agent('mtls-leaf', [
    '--trusted-ca-file',
    certs.ca,
    '--cert-file',
    certs.clientLeaf,
    '--key-file',
    certs.clientKey,
  ]);
  const line = await failedAttempt(a);
  assert.is(line.status, 401);
  assert.match(line.reason, NOT_TRUSTED);
  const refused = await backend!.proc.waitForLine(
    (l) => l.includes('agent handshake refused') && l.includes(NOT_TRUSTED),
    10_000,
  );
  assert.is(JSON.parse(refused).status, 401);
  assert.is(await registered('mtls-leaf'), false);
  await stopAgent(a);
});

test('mutual TLS: a CN that names no user is refused with 401', async () => {
  const stranger = issueClientCert(certs, 'stranger');
  const a = await agent('mtls-stranger', [
    '--trusted-ca-file',
    certs.ca,
    '--cert-file',
    stranger.chain,
    '--key-file',
    stranger.key,
  ]);
  const line = await failedAttempt(a);
  assert.is(line.status, 401);
  assert.match(line.reason, 'no enabled user "stranger"');
  await stopAgent(a);
});

test('mutual TLS required: an agent without a client certificate is refused', async () => {
  const a = await agent('mtls-none', ['--trusted-ca-file', certs.ca]);
  const line = await failedAttempt(a);
  assert.is(line.status, 401);
  assert.match(line.reason, 'client certificate required');
  assert.is(await registered('mtls-none'), false);
  await stopAgent(a);
});

test('bad TLS files: one line naming the flag, exit 2', async () => {
  const missing = `${certs.dir}/missing.pem`;
  const b = await run(BACKEND_BIN, [
    'start',
    '--agent-cert-file',
    missing,
    '--agent-key-file',
    certs.serverKey,
  ]);
  assert.is(b.code, 2);
  assert.match(b.stderr, `--agent-cert-file: cannot read ${missing}: no such file`);
  assert.is(b.stderr.trim().split('\n').length, 1);

  const fromEnv = await run(BACKEND_BIN, ['start'], {
    MONITOR_BACKEND_AGENT_CERT_FILE: missing,
    MONITOR_BACKEND_AGENT_KEY_FILE: certs.serverKey,
  });
  assert.is(fromEnv.code, 2);
  assert.match(fromEnv.stderr, `--agent-cert-file: cannot read ${missing}`);

  const half = await run(BACKEND_BIN, ['start', '--agent-cert-file', certs.serverCert]);
  assert.is(half.code, 2);
  assert.match(half.stderr, '--agent-key-file');

  const notPem = await run(BACKEND_BIN, [
    'start',
    '--agent-cert-file',
    certs.serverCert,
    '--agent-key-file',
    certs.serverKey,
    '--agent-trusted-ca-file',
    certs.serverKey,
  ]);
  assert.is(notPem.code, 2);
  assert.match(notPem.stderr, '--agent-trusted-ca-file');

  const ag = await run(AGENT_BIN, ['start', '--backend-url', wssUrl(backend!), '--trusted-ca-file', missing]);
  assert.is(ag.code, 2);
  assert.match(ag.stderr, `--trusted-ca-file: cannot read ${missing}: no such file`);
  assert.is(ag.stderr.trim().split('\n').length, 1);

  // The chain rule: the leaf must come first, which the key check catches at start.
  const reversed = await run(AGENT_BIN, [
    'start',
    '--backend-url',
    wssUrl(backend!),
    '--cert-file',
    certs.clientChainReversed,
    '--key-file',
    certs.clientKey,
  ]);
  assert.is(reversed.code, 2);
  assert.match(reversed.stderr, /--key-file: .* does not match the first certificate of --cert-file/);

  const wrongKey = await run(AGENT_BIN, [
    'start',
    '--backend-url',
    wssUrl(backend!),
    '--cert-file',
    certs.clientLeaf,
    '--key-file',
    certs.serverKey,
  ]);
  assert.is(wrongKey.code, 2);
  assert.match(wrongKey.stderr, '--key-file');
});

test.run();
