// suite-timeout: 240
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from '../harness/uvu.ts';
import {
  ADMIN,
  CtlHome,
  MONITORCTL_BIN,
  freePort,
  sleep,
  startBackend,
  tempDir,
  type Backend,
} from '../harness/index.ts';
import { makeTestCerts } from '../harness/certs.ts';

// monitorctl's configuration as a person uses it, against real backends: configure (flags, API
// key, prompts on a terminal), the file's modes, contexts of two backends, the precedence of flags,
// variables and contexts, tokens refreshed after they expire (before a request, and after a 401),
// logout, env, and the exit status of each kind of failure.

let a: Backend; // access tokens live 2 s
let b: Backend;
const secrets: string[] = [ADMIN.password, ADMIN.apiKey];

test.before(async () => {
  [a, b] = await Promise.all([
    startBackend({ name: 'ctl-a', logLevel: 'warn', extraArgs: ['--access-token-expiry', '2'] }),
    startBackend({ name: 'ctl-b', logLevel: 'warn' }),
  ]);
});

const servers: (Server | TcpServer)[] = [];

test.after(async () => {
  for (const s of servers) s.close();
  await Promise.all([a?.stop(), b?.stop()]);
});

/** An HTTPS front for backend b (TLS ends there, as at a balancer); its port. */
async function tlsFront(cert: string, key: string): Promise<number> {
  const target = new URL(b.apiUrl);
  const server = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    const up = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  servers.push(server);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return port;
}

const loginArgs = (url: string) => [
  'configure',
  '-n',
  '--url',
  url,
  '--username',
  ADMIN.username,
  '--password',
  ADMIN.password,
];

/** No secret of the harness in what monitorctl printed. */
function assertNoSecret(...texts: string[]): void {
  for (const t of texts) for (const s of secrets) assert.not.ok(t.includes(s), 'a secret was printed');
}

test('configure -n with a password: tokens saved in a 0600 file in a 0700 folder, never the password', async () => {
  const home = new CtlHome();
  const r = await home.run(loginArgs(a.apiUrl));
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /Configured context "default"/);
  assertNoSecret(r.stdout, r.stderr);
  assert.equal(home.modes(), { file: 0o600, dir: 0o700 });
  const cfg = home.config();
  assert.is(cfg.current_context, 'default');
  const ctx = cfg.contexts.default;
  assert.is(ctx.url, a.apiUrl);
  assert.is(ctx.username, 'admin');
  assert.type(ctx.access_token, 'string');
  assert.type(ctx.refresh_token, 'string');
  assert.type(ctx.expires_at, 'number');
  assert.not.ok(readFileSync(home.configFile, 'utf8').includes(ADMIN.password));
  const list = await home.run(['namespace', 'list', '--format', 'json']);
  assert.is(list.code, 0, list.stderr);
  assert.ok(JSON.parse(list.stdout).some((n: { name: string }) => n.name === 'default'));
});

test('configure -n with an API key, under XDG_CONFIG_HOME', async () => {
  const home = new CtlHome();
  const xdg = tempDir('xdg');
  const env = { XDG_CONFIG_HOME: xdg };
  const r = await home.run(
    ['configure', '-n', '--url', b.apiUrl, '--api-key', ADMIN.apiKey, '--namespace', 'default'],
    {
      env,
    },
  );
  assert.is(r.code, 0, r.stderr);
  assertNoSecret(r.stdout, r.stderr);
  const file = join(xdg, 'monitor', 'monitorctl.json');
  assert.ok(existsSync(file));
  assert.not.ok(existsSync(home.configFile), 'HOME/.config is not used when XDG_CONFIG_HOME is set');
  const ctx = JSON.parse(readFileSync(file, 'utf8')).contexts.default;
  assert.is(ctx.api_key, ADMIN.apiKey);
  assert.is(ctx.access_token, undefined);
  const list = await home.run(['user', 'list', '--format', 'json'], { env });
  assert.is(list.code, 0, list.stderr);
  assert.ok(JSON.parse(list.stdout).some((u: { username: string }) => u.username === 'admin'));
  // view names the credential, never its value
  const view = await home.run(['config', 'view'], { env });
  assert.match(view.stdout, /Credential:\s+API key \(context\)/);
  assertNoSecret(view.stdout);
});

test('contexts: two backends, use-context, --context and MONITOR_CONTEXT switch between them', async () => {
  const home = new CtlHome();
  assert.is((await home.run([...loginArgs(a.apiUrl), '--context', 'one'])).code, 0);
  assert.is(
    (await home.run(['configure', '-n', '--context', 'two', '--url', b.apiUrl, '--api-key', ADMIN.apiKey]))
      .code,
    0,
  );
  // Each backend gets a namespace of its own, so answers tell them apart.
  assert.is(
    (await home.run(['namespace', 'create', 'only-two'])).code,
    0,
    'configure makes its context current',
  );
  assert.is((await home.run(['namespace', 'create', 'only-one', '--context', 'one'])).code, 0);
  const names = async (...extra: string[]) => {
    const r = await home.run(['namespace', 'list', '--format', 'template={{ .name }}', ...extra]);
    assert.is(r.code, 0, r.stderr);
    return r.stdout.trim().split('\n');
  };
  assert.ok((await names()).includes('only-two'));
  assert.not.ok((await names()).includes('only-one'));
  const contexts = await home.run(['config', 'list-contexts', '--format', 'json']);
  assert.equal(
    JSON.parse(contexts.stdout).map((c: Record<string, string>) => [c.name, c.current]),
    [
      ['one', ''],
      ['two', '*'],
    ],
  );
  assertNoSecret(contexts.stdout);
  assert.is((await home.run(['config', 'use-context', 'one'])).code, 0);
  assert.ok((await names()).includes('only-one'));
  assert.ok((await names('--context', 'two')).includes('only-two'));
  const viaEnv = await home.run(['namespace', 'list', '--format', 'template={{ .name }}'], {
    env: { MONITOR_CONTEXT: 'two' },
  });
  assert.ok(viaEnv.stdout.includes('only-two'));
  const unknown = await home.run(['config', 'use-context', 'three']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /no context "three"/);
  const unknownFlag = await home.run(['namespace', 'list', '--context', 'three']);
  assert.is(unknownFlag.code, 2);
  // A URL naming the other server gets neither context's credentials.
  const other = await home.run(['namespace', 'list', '--url', b.apiUrl]);
  assert.is(other.code, 4, other.stderr);
  assert.match(other.stderr, /no credentials/);
});

test('precedence: flag over MONITOR_ variable over context; set-namespace and set-format', async () => {
  const home = new CtlHome();
  assert.is((await home.run(['configure', '-n', '--url', b.apiUrl, '--api-key', ADMIN.apiKey])).code, 0);
  assert.is((await home.run(['config', 'set-namespace', 'ctx-ns'])).code, 0);
  assert.is((await home.run(['config', 'set-format', 'yaml'])).code, 0);
  const view = async (args: string[], env: Record<string, string> = {}) => {
    const r = await home.run(['config', 'view', '--format', 'json', ...args], { env });
    assert.is(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  let v = await view([]);
  assert.is(v.namespace, 'ctx-ns');
  assert.is(v.namespace_source, 'context');
  v = await view([], { MONITOR_NAMESPACE: 'env-ns' });
  assert.is(v.namespace, 'env-ns');
  assert.is(v.namespace_source, 'environment');
  v = await view(['--namespace', 'flag-ns'], { MONITOR_NAMESPACE: 'env-ns' });
  assert.is(v.namespace, 'flag-ns');
  assert.is(v.namespace_source, 'flag');
  // The stored format applies when nothing else says one.
  const r = await home.run(['config', 'view']);
  assert.match(r.stdout, /^url: /m);
  const bad = await home.run(['config', 'set-format', 'xml']);
  assert.is(bad.code, 2);
  const timeout = await home.run(['config', 'view', '--timeout', 'soon']);
  assert.is(timeout.code, 2);
  assert.match(timeout.stderr, /--timeout/);
});

test('an expired access token is refreshed before the request, and after a 401', async () => {
  const home = new CtlHome();
  assert.is((await home.run(loginArgs(a.apiUrl))).code, 0);
  const first = home.config().contexts.default;
  await sleep(2500);
  const r = await home.run(['namespace', 'list']);
  assert.is(r.code, 0, r.stderr);
  const second = home.config().contexts.default;
  assert.is.not(second.refresh_token, first.refresh_token, 'a new pair was saved');
  assert.is.not(second.access_token, first.access_token);
  assert.ok(second.expires_at >= first.expires_at);
  assert.equal(home.modes(), { file: 0o600, dir: 0o700 });
  // The file claims the token lives on: the server's 401 makes monitorctl refresh and retry.
  const cfg = home.config();
  cfg.contexts.default.expires_at = 4_000_000_000;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(home.configFile, JSON.stringify(cfg));
  await sleep(2500);
  const again = await home.run(['namespace', 'list']);
  assert.is(again.code, 0, again.stderr);
  assert.is.not(home.config().contexts.default.refresh_token, second.refresh_token);
  // env refreshes first and prints the new token.
  const env = await home.run(['env']);
  assert.is(env.code, 0, env.stderr);
  const token = home.config().contexts.default.access_token;
  assert.ok(env.stdout.includes(`export MONITOR_ACCESS_TOKEN='${token}'`));
  assert.match(env.stdout, new RegExp(`^export MONITOR_URL='${a.apiUrl}'$`, 'm'));
  assert.match(env.stdout, /^export MONITOR_NAMESPACE='default'$/m);
  // The printed token works on its own, with no context at all.
  const bare = new CtlHome();
  const list = await bare.run(['namespace', 'list'], {
    env: { MONITOR_URL: a.apiUrl, MONITOR_ACCESS_TOKEN: token },
  });
  assert.is(list.code, 0, list.stderr);
});

test('logout ends the session on the server and forgets the tokens', async () => {
  const home = new CtlHome();
  assert.is((await home.run(loginArgs(b.apiUrl))).code, 0);
  const before = home.config().contexts.default;
  const r = await home.run(['logout']);
  assert.is(r.code, 0, r.stderr);
  const after = home.config().contexts.default;
  assert.is(after.access_token, undefined);
  assert.is(after.refresh_token, undefined);
  assert.is(after.url, b.apiUrl);
  // The old token no longer works at the server.
  const res = await b.get('/api/core/v2/namespaces', {
    headers: { Authorization: `Bearer ${before.access_token}` },
  });
  assert.is(res.status, 401);
  const list = await home.run(['namespace', 'list']);
  assert.is(list.code, 4);
  assert.match(list.stderr, /monitorctl configure/);
});

test('failures: bad credentials 4, unreachable 5 with the URL, nothing configured 2, unknown type 2', async () => {
  const home = new CtlHome();
  const bad = await home.run([
    'configure',
    '-n',
    '--url',
    a.apiUrl,
    '--username',
    'admin',
    '--password',
    'wrong-password',
  ]);
  assert.is(bad.code, 4);
  assert.is(bad.stderr.trim().split('\n').length, 1);
  assert.match(bad.stderr, /bad credentials/);
  assert.not.ok(existsSync(home.configFile), 'nothing saved after a failed login');
  const port = await freePort();
  const down = await home.run([
    'check',
    'list',
    '--url',
    `http://127.0.0.1:${port}`,
    '--api-key',
    ADMIN.apiKey,
  ]);
  assert.is(down.code, 5);
  assert.is(down.stderr, `Error: cannot reach the API at http://127.0.0.1:${port}: connection refused\n`);
  assertNoSecret(down.stderr);
  const none = await home.run(['check', 'list']);
  assert.is(none.code, 2);
  assert.match(none.stderr, /no API URL/);
  const type = await home.run(['widget', 'list']);
  assert.is(type.code, 2);
  const missing = await home.run(['configure', '-n', '--url', a.apiUrl]);
  assert.is(missing.code, 2);
  const noTty = await home.run(['configure']);
  assert.is(noTty.code, 2);
  assert.match(noTty.stderr, /-n/);
});

test('TLS: the server is trusted through --trusted-ca-file (saved in the context) or not checked at all', async () => {
  const certs = makeTestCerts();
  const url = `https://127.0.0.1:${await tlsFront(certs.serverCert, certs.serverKey)}`;
  const home = new CtlHome();
  const untrusted = await home.run(loginArgs(url));
  assert.is(untrusted.code, 5);
  assert.match(untrusted.stderr, /certificate not signed by trusted authority/);
  assert.match(untrusted.stderr, /--trusted-ca-file/);
  const other = await home.run([...loginArgs(url), '--trusted-ca-file', certs.otherCa]);
  assert.is(other.code, 5);
  const ok = await home.run([...loginArgs(url), '--trusted-ca-file', certs.ca]);
  assert.is(ok.code, 0, ok.stderr);
  assert.is(home.config().contexts.default.trusted_ca_file, certs.ca);
  const list = await home.run(['namespace', 'list']);
  assert.is(list.code, 0, list.stderr);
  const insecure = await new CtlHome().run([
    'namespace',
    'list',
    '--url',
    url,
    '--api-key',
    ADMIN.apiKey,
    '--insecure-skip-tls-verify',
  ]);
  assert.is(insecure.code, 0, insecure.stderr);
  const missing = await home.run(['namespace', 'list', '--trusted-ca-file', '/nonexistent/ca.pem']);
  assert.is(missing.code, 2);
});

test('a server that accepts but never answers: exit 5 after --timeout', async () => {
  const silent = createTcpServer(() => {});
  servers.push(silent);
  const port = await freePort();
  await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
  const started = Date.now();
  const r = await new CtlHome().run([
    'check',
    'list',
    '--url',
    `http://127.0.0.1:${port}`,
    '--api-key',
    'k',
    '--timeout',
    '1s',
  ]);
  assert.is(r.code, 5);
  assert.is(r.stderr, `Error: no answer from http://127.0.0.1:${port} within 1 s (--timeout)\n`);
  assert.ok(Date.now() - started < 10_000);
});

test('configure on a terminal asks its questions (through script(1), a real pty)', async () => {
  const home = new CtlHome();
  const child = spawn('script', ['-qfec', `${process.execPath} ${MONITORCTL_BIN} configure`, '/dev/null'], {
    env: { ...home.env(), TERM: 'xterm', COLUMNS: '100', LINES: '30' },
  });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
  const closed = new Promise<number | null>((r) => child.on('close', r));
  const answer = async (prompt: RegExp, keys: string) => {
    const until = Date.now() + 15_000;
    while (!prompt.test(screen)) {
      if (Date.now() > until) throw new Error(`no prompt ${prompt} on the screen:\n${screen}`);
      await sleep(50);
    }
    screen = '';
    child.stdin.write(keys);
  };
  try {
    await answer(/API URL/, `${b.apiUrl}\r`);
    await answer(/Authentication/, '\r');
    await answer(/Username/, '\r');
    await answer(/Password/, `${ADMIN.password}\r`);
    await answer(/Namespace/, 'default\r');
    await answer(/output format/, '\x1b[B\r'); // down once: json
    assert.is(await closed, 0, screen);
  } finally {
    child.kill();
  }
  assert.not.ok(screen.includes(ADMIN.password));
  const ctx = home.config().contexts.default;
  assert.is(ctx.url, b.apiUrl);
  assert.is(ctx.format, 'json');
  assert.type(ctx.refresh_token, 'string');
});

test.run();
