// suite-timeout: 240
import { spawnSync } from 'node:child_process';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  BACKEND_BIN,
  startBackend,
  startEtcd,
  startNats,
  stopAndAssertNoSecret,
  tempDir,
  type Backend,
  type EtcdServer,
  type NatsServer,
} from '../harness/index.ts';
import { makeTestCerts } from '../harness/certs.ts';

// A backend logging in to a NATS with users and an etcd with authentication on, with credentials
// in the URLs or in flags, and never writing a password to its output
// (docs/compatibility.md#credentials-of-the-external-etcd-and-nats).

// Characters that must be percent-encoded in a URL, so that decoding is exercised too.
const NATS_PASSWORD = 'n4ts-P@ss:w/rd';
const ETCD_PASSWORD = 'etcd-R00t@pw';
const secrets = [NATS_PASSWORD, ETCD_PASSWORD].flatMap((p) => [p, encodeURIComponent(p)]);

let nats: NatsServer;
let etcd: EtcdServer;
const others: { stop(): Promise<unknown> }[] = [];
const backends: Backend[] = [];

test.before(async () => {
  [nats, etcd] = await Promise.all([
    startNats({ auth: { user: 'monitor', password: NATS_PASSWORD } }),
    startEtcd({ rootPassword: ETCD_PASSWORD }),
  ]);
});

test.after(async () => {
  for (const b of backends) await b.kill().catch(() => {});
  for (const s of [...others, nats, etcd]) await s?.stop().catch(() => {});
});

test('user:password in --nats-url and --etcd-username/--etcd-password: the backend serves and logs neither password', async () => {
  const b = await startBackend({
    name: 'creds-url',
    natsUrl: `nats://monitor:${encodeURIComponent(NATS_PASSWORD)}@127.0.0.1:${nats.port}`,
    etcdUrl: etcd.url,
    extraArgs: ['--etcd-username', 'root', '--etcd-password', ETCD_PASSWORD],
    // The harness's init would not know the etcd flags; /health reading etcd proves the login.
    init: false,
  });
  backends.push(b);
  const health = await b.health();
  assert.is(health.status, 200);
  assert.is(health.body.nats.healthy, true);
  assert.is(health.body.etcd.healthy, true);
  const started = b.logs().find((l) => l.msg === 'backend started');
  assert.equal(started?.nats, [`nats://127.0.0.1:${nats.port}`]);
  assert.equal(started?.etcd, [etcd.url]);
  await stopAndAssertNoSecret(b, secrets);
});

test('--nats-user/--nats-password and user:password in --etcd-client-urls: the backend serves, init logs in too, neither password is logged', async () => {
  const b = await startBackend({
    name: 'creds-flags',
    natsUrl: nats.url,
    // The harness runs `monitor-backend init` with this URL as well: its login is exercised too.
    etcdUrl: `http://root:${encodeURIComponent(ETCD_PASSWORD)}@127.0.0.1:${etcd.clientPort}`,
    extraArgs: ['--nats-user', 'monitor', '--nats-password', NATS_PASSWORD],
  });
  backends.push(b);
  assert.is((await b.health()).status, 200);
  // Served by the API with the administrator that init created.
  assert.is((await b.get('/api/core/v2/namespaces')).status, 200);
  await stopAndAssertNoSecret(b, secrets);
});

test('a wrong NATS password: the backend exits 1 saying so, without echoing either password', () => {
  const r = spawnSync(
    BACKEND_BIN,
    [
      'start',
      '--state-dir',
      tempDir('backend-wrong'),
      '--api-port',
      '0',
      '--agent-port',
      '0',
      '--legacy-api-port',
      '0',
      '--nats-url',
      `nats://monitor:wrong-${encodeURIComponent(NATS_PASSWORD)}@127.0.0.1:${nats.port}`,
      '--etcd-client-urls',
      etcd.url,
      '--etcd-password',
      ETCD_PASSWORD,
      '--etcd-username',
      'root',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.is(r.status, 1);
  assert.match(r.stderr, /AUTHORIZATION_VIOLATION|Authorization Violation/i);
  for (const s of secrets) assert.not.ok((r.stdout + r.stderr).includes(s), 'the output holds a password');
});

test('a wrong etcd password: init exits 1 at once saying so, even with --wait, without echoing it', () => {
  const r = spawnSync(
    BACKEND_BIN,
    [
      'init',
      '--etcd-client-urls',
      etcd.url,
      '--etcd-username',
      'root',
      '--etcd-password',
      `wrong-${ETCD_PASSWORD}`,
      '--cluster-admin-username',
      'admin',
      '--cluster-admin-password',
      'P@ssw0rd!admin',
      '--wait',
    ],
    // Only a hang reaches this timeout; --wait used to retry a refused password forever.
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.is(r.error, undefined, 'init did not end by itself');
  assert.is(r.status, 1);
  assert.match(
    r.stderr,
    /^monitor-backend: etcd at http:\/\/127\.0\.0\.1:\d+: authentication failed.*--etcd-password/m,
  );
  for (const s of secrets) assert.not.ok((r.stdout + r.stderr).includes(s), 'the output holds a password');
});

test('a password flag in a bad combination: exit 2 naming the flag, not the password', () => {
  const r = spawnSync(BACKEND_BIN, ['start', '--nats-url', nats.url, '--nats-password', NATS_PASSWORD], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, MONITOR_BACKEND_ETCD_PASSWORD: ETCD_PASSWORD },
  });
  assert.is(r.status, 2);
  assert.is(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /--nats-user/);
  for (const s of secrets) assert.not.ok(r.stderr.includes(s), 'the error holds a password');
});

test('--nats-tls-ca-file, --nats-tls-cert-file and --nats-tls-key-file: the backend serves over a NATS that verifies clients', async () => {
  const certs = makeTestCerts();
  const tlsNats = await startNats({
    extraArgs: [
      '--tls',
      '--tlscert',
      certs.serverCert,
      '--tlskey',
      certs.serverKey,
      '--tlscacert',
      certs.ca,
      '--tlsverify',
    ],
  });
  others.push(tlsNats);
  const b = await startBackend({
    name: 'creds-tls',
    natsUrl: `tls://127.0.0.1:${tlsNats.port}`,
    etcdUrl: `http://root:${encodeURIComponent(ETCD_PASSWORD)}@127.0.0.1:${etcd.clientPort}`,
    extraArgs: [
      '--nats-tls-ca-file',
      certs.ca,
      '--nats-tls-cert-file',
      certs.clientChain,
      '--nats-tls-key-file',
      certs.clientKey,
    ],
    init: false,
  });
  backends.push(b);
  const health = await b.health();
  assert.is(health.status, 200);
  assert.is(health.body.nats.healthy, true);
  await stopAndAssertNoSecret(b, secrets);
});

test.run();
