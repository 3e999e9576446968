// suite-timeout: 180
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { makeTestCerts, type TestCerts } from '../harness/certs.ts';
import { CtlHome } from '../harness/monitorctl.ts';
import {
  ADMIN,
  adminAuth,
  BACKEND_BIN,
  getJson,
  getJsonTls,
  startBackend,
  tempDir,
  type Backend,
} from '../harness/index.ts';

// The REST API port over TLS (docs/operations.md#rest-api-over-tls): --cert-file and --key-file
// (here from the config file) serve REST, the dashboard, /health and /ready over HTTPS;
// --trusted-ca-file (here from MONITOR_BACKEND_TRUSTED_CA_FILE) verifies a client certificate when
// one is presented and requires none; monitorctl talks to it with its --trusted-ca-file; bad files
// stop the start with one line naming the flag.

let certs: TestCerts;
let foreign: TestCerts;
let backend: Backend;

test.before(async () => {
  certs = makeTestCerts({ clientCn: 'someone' });
  foreign = makeTestCerts();
  const dir = tempDir('api-tls');
  const config = join(dir, 'backend.yml');
  writeFileSync(config, `cert-file: ${certs.serverCert}\nkey-file: ${certs.serverKey}\n`);
  backend = await startBackend({
    name: 'api-tls',
    extraArgs: ['--config-file', config],
    env: { MONITOR_BACKEND_TRUSTED_CA_FILE: certs.ca },
    apiTls: { ca: certs.ca },
  });
});

test.after(async () => {
  await backend?.stop();
});

test('REST, dashboard, /health and /ready answer over HTTPS; plain HTTP and an untrusted server certificate do not', async () => {
  assert.match(backend.apiUrl, /^https:/);
  assert.is((await backend.health()).status, 200);
  assert.is((await backend.ready()).status, 200);
  const ns = await backend.get('/api/core/v2/namespaces');
  assert.is(ns.status, 200);
  assert.ok(ns.body.some((n: { name: string }) => n.name === 'default'));
  const page = await getJsonTls(`${backend.apiUrl}/`, { ca: certs.ca });
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  const refused = async (call: () => Promise<unknown>) =>
    call().then(
      () => '',
      (e: Error) => `${e.message} ${(e.cause as Error | undefined)?.message ?? ''}`,
    );
  assert.ok(
    await refused(() => getJson(`http://127.0.0.1:${backend.apiPort}/health`)),
    'plain HTTP is refused',
  );
  assert.match(
    await refused(() => getJsonTls(`${backend.apiUrl}/health`, { ca: foreign.ca })),
    /self[- ]signed|unable to (verify|get)/i,
  );
});

test('a client certificate is verified when presented: trusted passes, foreign is 401 with the reason, none is fine', async () => {
  const url = `${backend.apiUrl}/api/core/v2/namespaces`;
  const trusted = await getJsonTls(
    url,
    { ca: certs.ca, cert: certs.clientChain, key: certs.clientKey },
    { headers: adminAuth },
  );
  assert.is(trusted.status, 200, JSON.stringify(trusted.body));
  const stranger = await getJsonTls(
    url,
    { ca: certs.ca, cert: foreign.clientChain, key: foreign.clientKey },
    { headers: adminAuth },
  );
  assert.is(stranger.status, 401);
  assert.equal(stranger.body, {
    message: 'client certificate refused: certificate not signed by trusted authority',
    code: 5,
  });
  // The certificate names nobody: credentials are still required.
  const anonymous = await getJsonTls(url, { ca: certs.ca, cert: certs.clientChain, key: certs.clientKey });
  assert.is(anonymous.status, 401);
  const none = await getJsonTls(url, { ca: certs.ca }, { headers: adminAuth });
  assert.is(none.status, 200);
});

test('monitorctl: trusts the API through --trusted-ca-file, refuses it without', async () => {
  const home = new CtlHome();
  const login = ['configure', '-n', '--url', backend.apiUrl, '--username', ADMIN.username];
  const untrusted = await home.run([...login, '--password', ADMIN.password]);
  assert.is(untrusted.code, 5);
  assert.match(untrusted.stderr, /certificate not signed by trusted authority/);
  const ok = await home.run([...login, '--password', ADMIN.password, '--trusted-ca-file', certs.ca]);
  assert.is(ok.code, 0, ok.stderr);
  const list = await home.run(['namespace', 'list', '--format', 'json']);
  assert.is(list.code, 0, list.stderr);
  assert.ok(JSON.parse(list.stdout).some((n: { name: string }) => n.name === 'default'));
});

test('bad TLS files or combinations: one line naming the flag, exit 2', () => {
  const dir = tempDir('api-tls-bad');
  const notPem = join(dir, 'not.pem');
  writeFileSync(notPem, 'hello\n');
  const cases: [string[], Record<string, string>, string][] = [
    [['--cert-file', certs.serverCert], {}, '--key-file: required with --cert-file'],
    [['--key-file', certs.serverKey], {}, '--cert-file: required with --key-file'],
    [['--trusted-ca-file', certs.ca], {}, '--trusted-ca-file: needs --cert-file and --key-file'],
    [
      ['--cert-file', join(dir, 'missing.crt'), '--key-file', certs.serverKey],
      {},
      `--cert-file: cannot read ${join(dir, 'missing.crt')}: no such file`,
    ],
    [['--cert-file', certs.serverCert, '--key-file', certs.clientKey], {}, '--key-file: '],
    [
      ['--cert-file', certs.serverCert, '--key-file', certs.serverKey],
      { MONITOR_BACKEND_TRUSTED_CA_FILE: notPem },
      `--trusted-ca-file: ${notPem} holds no PEM certificate`,
    ],
  ];
  for (const [args, env, message] of cases) {
    const r = spawnSync(BACKEND_BIN, ['start', '--state-dir', dir, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 30_000,
    });
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.is(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
    assert.ok(r.stderr.startsWith(`monitor-backend: ${message}`), r.stderr);
  }
});

test.run();
