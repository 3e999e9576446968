// suite-timeout: 240
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  BACKEND_BIN,
  startAgent,
  startBackend,
  startEtcd,
  startNats,
  stopAndAssertNoSecret,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
  type EtcdServer,
  type NatsServer,
} from '../harness/index.ts';
import { makeTestCerts, type TestCerts } from '../harness/certs.ts';
import { makeNatsOperator, type NatsOperator } from '../harness/nats-jwt.ts';

// The two credentials of an external store that are files rather than passwords, against real
// servers that check them: an etcd serving clients over TLS only and requiring their certificate
// (--etcd-trusted-ca-file, --etcd-cert-file, --etcd-key-file), and a NATS in operator mode that
// admits only users whose JWT an account it knows signed (--nats-creds). Each works end to end, and
// each wrong one ends the backend with a line naming the store and the flag to check, not with a
// hang or a bare gRPC status (docs/compatibility.md#credentials-of-the-external-etcd-and-nats).

let certs: TestCerts;
let operator: NatsOperator;
let etcd: EtcdServer;
let jwtNats: NatsServer;
let plainNats: NatsServer;
const backends: Backend[] = [];
const agents: AgentProc[] = [];

/** The client key's PEM body: key material must not reach the output either. */
let keySecret: string;
let etcdTls: string[];

test.before(async () => {
  certs = makeTestCerts({ clientCn: 'monitor-backend' });
  operator = makeNatsOperator();
  keySecret = readFileSync(certs.clientKey, 'utf8').split('\n')[1]!;
  etcdTls = [
    '--etcd-trusted-ca-file',
    certs.ca,
    '--etcd-cert-file',
    certs.clientChain,
    '--etcd-key-file',
    certs.clientKey,
  ];
  [etcd, jwtNats, plainNats] = await Promise.all([
    startEtcd({ tls: certs, clientCertAuth: true }),
    startNats({ jwt: operator.trust }),
    startNats(),
  ]);
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  for (const b of backends) await b.kill().catch(() => {});
  for (const s of [etcd, jwtNats, plainNats]) await s?.stop().catch(() => {});
});

/** `monitor-backend <args>` run to its end; the timeout only keeps a hang from stalling the suite. */
function backendCli(args: string[]) {
  const r = spawnSync(BACKEND_BIN, args, { encoding: 'utf8', timeout: 90_000 });
  assert.is(r.error, undefined, `monitor-backend ${args[0]} did not end by itself`);
  return r;
}

/** `start` on free ports, run until it exits. */
const startToExit = (natsUrl: string, extra: string[]) =>
  backendCli([
    'start',
    '--state-dir',
    tempDir('backend-refused'),
    '--api-port',
    '0',
    '--agent-port',
    '0',
    '--legacy-api-port',
    '0',
    '--nats-url',
    natsUrl,
    '--etcd-client-urls',
    etcd.url,
    ...extra,
  ]);

/** A check written through the API and read back: the configuration store (etcd) works. */
async function checkRoundTrip(b: Backend, name: string) {
  const put = await b.get(`/api/core/v2/namespaces/default/checks/${name}`, {
    method: 'PUT',
    body: { command: 'true', interval: 60, subscriptions: ['creds'], metadata: { name } },
  });
  assert.is(put.status, 201, JSON.stringify(put.body));
  const got = await b.get(`/api/core/v2/namespaces/default/checks/${name}`);
  assert.is(got.status, 200);
  assert.is(got.body.command, 'true');
  assert.equal(got.body.subscriptions, ['creds']);
}

test('etcd over TLS with a client certificate: init and the backend both work through it', async () => {
  const b = await startBackend({
    name: 'etcd-tls',
    natsUrl: plainNats.url,
    etcdUrl: etcd.url,
    extraArgs: etcdTls,
    // The harness's init: the administrator and API key it writes are what the API serves below.
    initArgs: etcdTls,
  });
  backends.push(b);
  const health = await b.health();
  assert.is(health.status, 200);
  assert.is(health.body.etcd.healthy, true);
  await checkRoundTrip(b, 'over-etcd-tls');
  const started = b.logs().find((l) => l.msg === 'backend started');
  assert.equal(started?.etcd, [etcd.url]);
  await stopAndAssertNoSecret(b, [keySecret]);
});

test('etcd requiring a client certificate, none given: start and init exit 1 saying so, init even with --wait', () => {
  const caOnly = ['--etcd-trusted-ca-file', certs.ca];
  const refused =
    /^monitor-backend: etcd at https:\/\/127\.0\.0\.1:\d+: .*client certificate.*--etcd-cert-file/m;
  const start = startToExit(plainNats.url, caOnly);
  assert.is(start.status, 1);
  assert.match(start.stderr, refused);
  // --wait waits for an etcd out of reach; one that refuses the certificate will not change its mind.
  const init = backendCli([
    'init',
    '--etcd-client-urls',
    etcd.url,
    '--cluster-admin-username',
    'admin',
    '--cluster-admin-password',
    'P@ssw0rd!admin',
    '--wait',
    ...caOnly,
  ]);
  assert.is(init.status, 1);
  assert.match(init.stderr, refused);
});

test("an etcd certificate from another authority: exit 1 saying the server's certificate is not trusted", () => {
  const r = startToExit(plainNats.url, [
    '--etcd-trusted-ca-file',
    certs.otherCa,
    '--etcd-cert-file',
    certs.clientChain,
    '--etcd-key-file',
    certs.clientKey,
  ]);
  assert.is(r.status, 1);
  assert.match(
    r.stderr,
    /^monitor-backend: etcd at https:\/\/127\.0\.0\.1:\d+: certificate not signed by trusted authority .*--etcd-trusted-ca-file/m,
  );
});

test('--nats-creds of a user of a JetStream account: the backend serves, an agent runs through it, neither the seed nor the JWT is logged', async () => {
  const user = operator.user('monitor-backend');
  const b = await startBackend({
    name: 'nats-jwt',
    natsUrl: jwtNats.url,
    etcdUrl: etcd.url,
    extraArgs: [...etcdTls, '--nats-creds', user.file],
    initArgs: etcdTls,
  });
  backends.push(b);
  assert.is((await b.health()).body.nats.healthy, true);
  await checkRoundTrip(b, 'over-nats-jwt');
  // The agent's session, entity and keepalive event live in JetStream, in the user's account.
  const agent = await startAgent({ name: 'jwt-agent', backendUrls: b.agentUrl, subscriptions: ['creds'] });
  agents.push(agent);
  const event = await waitFor(
    async () => {
      const r = await b.get('/api/core/v2/namespaces/default/events/jwt-agent/keepalive');
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 30_000, what: 'the agent keepalive event' },
  );
  assert.is(event.check.status, 0);
  const entity = await b.get('/api/core/v2/namespaces/default/entities/jwt-agent');
  assert.is(entity.status, 200);
  assert.ok(entity.body.subscriptions.includes('creds'));
  await agent.stop();
  const output = await stopAndAssertNoSecret(b, [user.seed, user.jwt, keySecret]);
  // Nor any other seed: a user seed always starts SU.
  assert.not.match(output, /\bSU[A-Z2-7]{50,}/);
});

test('--nats-creds of a user of an account the server does not know: exit 1 naming NATS, without the seed or JWT', () => {
  const stranger = operator.strangerUser('stranger');
  const r = startToExit(jwtNats.url, [...etcdTls, '--nats-creds', stranger.file]);
  assert.is(r.status, 1);
  assert.match(r.stderr, /^monitor-backend: NATS at nats:\/\/127\.0\.0\.1:\d+: .*Authorization Violation/m);
  for (const s of [stranger.seed, stranger.jwt])
    assert.not.ok((r.stdout + r.stderr).includes(s), 'the output holds the credentials');
});

test('--nats-creds with --nats-user: exit 2 naming the flags, before connecting anywhere', () => {
  const r = backendCli([
    'start',
    '--nats-url',
    jwtNats.url,
    '--etcd-client-urls',
    etcd.url,
    '--nats-creds',
    operator.user('both').file,
    '--nats-user',
    'monitor',
    '--nats-password',
    'n0t-used',
  ]);
  assert.is(r.status, 2);
  assert.is(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /--nats-creds: cannot be used with --nats-user/);
  assert.not.ok(r.stderr.includes('n0t-used'));
});

test.run();
