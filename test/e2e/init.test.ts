// suite-timeout: 240
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  BACKEND_BIN,
  freePort,
  getJson,
  startBackend,
  waitFor,
  type Backend,
  type JsonResponse,
} from '../harness/index.ts';

// `monitor-backend init` against a backend started without it: nobody can log in before; init
// creates the administrator (and its API key) and the seeds (docs/compatibility.md#backend-init); a second
// run exits 3 unless --ignore-already-initialized; the environment works like the flags; bad input
// exits 2 naming the flag; an unreachable etcd exits 1.

const ADMIN_USER = 'boss';
const ADMIN_PW = 'long-enough-1';
const API_KEY = randomUUID();
const backends: Backend[] = [];
let backend: Backend;

interface CliResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `monitor-backend <args>` without any MONITOR_BACKEND_* of ours, plus `env`. */
function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliResult> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('MONITOR_BACKEND_')) base[k] = v;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(BACKEND_BIN, args, { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}
const show = (r: CliResult) =>
  `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
/** The lines of stderr that are not JSON log lines. */
const messageLines = (r: CliResult) =>
  r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('{'));

const initArgs = (etcdUrl: string, extra: string[] = []) => [
  'init',
  '--etcd-client-urls',
  etcdUrl,
  '--cluster-admin-username',
  ADMIN_USER,
  '--cluster-admin-password',
  ADMIN_PW,
  '--cluster-admin-api-key',
  API_KEY,
  ...extra,
];

const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const login = (b: Backend, user: string, password: string) =>
  getJson(`${b.apiUrl}/auth`, { headers: basic(user, password) });
const withKey = (b: Backend, path: string, key = API_KEY) =>
  getJson(b.apiUrl + path, { headers: { Authorization: `Key ${key}` } });
/** Init writes etcd directly; the backend sees it through its watch. */
const loginSoon = (b: Backend, user: string, password: string) =>
  waitFor(
    async () => {
      const r = await login(b, user, password);
      return r.status === 200 ? r : undefined;
    },
    { timeoutMs: 5000, what: `${user} to log in` },
  );

const namesOf = (r: JsonResponse) =>
  (r.body as Array<{ metadata?: { name?: string }; name?: string; username?: string }>).map(
    (x) => x.metadata?.name ?? x.name ?? x.username,
  );

test.before(async () => {
  backend = await startBackend({ name: 'init-1', init: false, logLevel: 'info' });
  backends.push(backend);
});

test.after(async () => {
  for (const b of backends) await b.stop().catch(() => {});
});

test('before init: the backend serves, but no administrator exists', async () => {
  assert.is((await backend.health()).status, 200);
  const r = await login(backend, ADMIN_USER, ADMIN_PW);
  assert.is(r.status, 401, `GET /auth as ${ADMIN_USER}: ${JSON.stringify(r.body)}`);
  assert.is(
    (await getJson(`${backend.apiUrl}/auth/test`, { headers: basic(ADMIN_USER, ADMIN_PW) })).status,
    401,
    '/auth/test',
  );
  assert.is((await withKey(backend, '/api/core/v2/namespaces')).status, 401, 'the future API key is unknown');
});

test('init creates the administrator and its API key: exit 0', async () => {
  const r = await cli(initArgs(backend.embedded!.etcdClientUrl));
  assert.is(r.code, 0, show(r));
  const tokens = await loginSoon(backend, ADMIN_USER, ADMIN_PW);
  assert.type(tokens.body.access_token, 'string');
  assert.type(tokens.body.refresh_token, 'string');
  assert.ok(tokens.body.expires_at > Date.now() / 1000, 'expires_at in the future');
  assert.is((await login(backend, ADMIN_USER, 'wrong-password')).status, 401, 'a wrong password');
  const viaToken = await getJson(`${backend.apiUrl}/api/core/v2/users`, {
    headers: { Authorization: `Bearer ${tokens.body.access_token}` },
  });
  assert.is(viaToken.status, 200, 'the administrator lists users');
  const viaKey = await waitFor(
    async () => {
      const x = await withKey(backend, '/api/core/v2/users');
      return x.status === 200 ? x : undefined;
    },
    { timeoutMs: 5000, what: 'the API key' },
  );
  assert.ok(namesOf(viaKey).includes(ADMIN_USER));
  const key = await withKey(backend, `/api/core/v2/apikeys/${API_KEY}`);
  assert.is(key.status, 200);
  assert.is(key.body.username, ADMIN_USER, 'the key belongs to the administrator');
});

test('the seeds: cluster roles, bindings, namespace default, users agent and the administrator', async () => {
  const roles = await withKey(backend, '/api/core/v2/clusterroles');
  assert.is(roles.status, 200);
  for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:agent', 'system:user'])
    assert.ok(namesOf(roles).includes(name), `cluster role ${name}`);

  // Each seeded role grants what the reference says, no more, for a sample of resources and verbs.
  type Rule = { verbs: string[]; resources: string[]; resource_names?: string[] | null };
  const rulesOf = (name: string) =>
    (roles.body as Array<{ metadata: { name: string }; rules: Rule[] }>).find(
      (r) => r.metadata.name === name,
    )!.rules;
  const grants = (rules: Rule[], verb: string, resource: string) =>
    rules.some(
      (r) =>
        (r.verbs.includes('*') || r.verbs.includes(verb)) &&
        (r.resources.includes('*') || r.resources.includes(resource)) &&
        !r.resource_names?.length,
    );
  const COMMON = [
    'assets',
    'checks',
    'entities',
    'events',
    'filters',
    'handlers',
    'hooks',
    'mutators',
    'silenced',
  ];
  const SAMPLE = [
    ...COMMON,
    'roles',
    'rolebindings',
    'namespaces',
    'users',
    'clusterroles',
    'clusterrolebindings',
    'apikeys',
    'localselfuser',
  ];
  const VERBS = ['get', 'list', 'create', 'update', 'delete'];
  const want: Record<string, (verb: string, res: string) => boolean> = {
    'cluster-admin': () => true,
    admin: (v, r) =>
      [...COMMON, 'roles', 'rolebindings'].includes(r) || (r === 'namespaces' && ['get', 'list'].includes(v)),
    edit: (v, r) => COMMON.includes(r) || (r === 'namespaces' && ['get', 'list'].includes(v)),
    view: (v, r) => [...COMMON, 'namespaces'].includes(r) && ['get', 'list'].includes(v),
    'system:agent': (_v, r) => r === 'events',
    'system:user': (v, r) => r === 'localselfuser' && ['get', 'update'].includes(v),
  };
  const wrong: string[] = [];
  for (const [role, fn] of Object.entries(want)) {
    for (const res of SAMPLE)
      for (const verb of VERBS) {
        if (grants(rulesOf(role), verb, res) !== fn(verb, res))
          wrong.push(`${role} ${verb} ${res}: want ${fn(verb, res)}`);
      }
  }
  assert.equal(wrong, [], 'seeded cluster roles');

  const bindings = await withKey(backend, '/api/core/v2/clusterrolebindings');
  assert.is(bindings.status, 200);
  const binding = (name: string) =>
    (
      bindings.body as Array<{
        metadata: { name: string };
        role_ref: { type: string; name: string };
        subjects: Array<{ type: string; name: string }>;
      }>
    ).find((b) => b.metadata.name === name);
  for (const [name, group] of [
    ['cluster-admin', 'cluster-admins'],
    ['system:agent', 'system:agents'],
    ['system:user', 'system:users'],
  ] as const) {
    const b = binding(name);
    assert.ok(b, `cluster role binding ${name}`);
    assert.equal(b!.role_ref, { type: 'ClusterRole', name }, `${name} role_ref`);
    assert.equal(b!.subjects, [{ type: 'Group', name: group }], `${name} subjects`);
  }

  const namespaces = await withKey(backend, '/api/core/v2/namespaces');
  assert.ok(namesOf(namespaces).includes('default'), 'namespace default');
  assert.is(
    (await withKey(backend, '/api/core/v2/namespaces/default/roles/system:pipeline')).status,
    200,
    'the pipeline role of default',
  );

  const agent = await withKey(backend, '/api/core/v2/users/agent');
  assert.is(agent.status, 200);
  assert.equal(agent.body.groups, ['system:agents']);
  assert.is(agent.body.disabled, false);
  const boss = await withKey(backend, `/api/core/v2/users/${ADMIN_USER}`);
  assert.equal(boss.body.groups, ['cluster-admins']);
  assert.is(
    (await login(backend, 'agent', 'P@ssw0rd!')).status,
    200,
    'the agent user logs in with the default password',
  );
});

test('a second init: exit 3 and one line saying the cluster is already initialized; nothing changes', async () => {
  const r = await cli([
    'init',
    '--etcd-client-urls',
    backend.embedded!.etcdClientUrl,
    '--cluster-admin-username',
    ADMIN_USER,
    '--cluster-admin-password',
    'another-password-2',
  ]);
  assert.is(r.code, 3, show(r));
  const lines = messageLines(r);
  assert.is(lines.length, 1, show(r));
  assert.match(lines[0]!, /already initialized/);
  assert.is(
    (await login(backend, ADMIN_USER, 'another-password-2')).status,
    401,
    'the second init did not change the password',
  );
  assert.is((await login(backend, ADMIN_USER, ADMIN_PW)).status, 200, 'the administrator keeps its password');
});

test('--ignore-already-initialized: exit 0', async () => {
  const r = await cli(initArgs(backend.embedded!.etcdClientUrl, ['--ignore-already-initialized']));
  assert.is(r.code, 0, show(r));
  assert.is((await login(backend, ADMIN_USER, ADMIN_PW)).status, 200);
});

test('the same through MONITOR_BACKEND_* environment variables', async () => {
  const b = await startBackend({ name: 'init-env', init: false, logLevel: 'info' });
  backends.push(b);
  const etcd = b.embedded!.etcdClientUrl;
  const key = randomUUID();
  const env = {
    MONITOR_BACKEND_CLUSTER_ADMIN_USERNAME: 'envboss',
    MONITOR_BACKEND_CLUSTER_ADMIN_PASSWORD: 'env-password-1',
    MONITOR_BACKEND_CLUSTER_ADMIN_API_KEY: key,
  };
  assert.is((await login(b, 'envboss', 'env-password-1')).status, 401, 'nobody before init');
  const first = await cli(['init', '--etcd-client-urls', etcd], env);
  assert.is(first.code, 0, show(first));
  await loginSoon(b, 'envboss', 'env-password-1');
  await waitFor(async () => (await withKey(b, '/api/core/v2/users', key)).status === 200, {
    timeoutMs: 5000,
    what: 'the API key from the environment',
  });

  const again = await cli(['init', '--etcd-client-urls', etcd], env);
  assert.is(again.code, 3, show(again));
  assert.match(messageLines(again).join('\n'), /already initialized/);
  const ignored = await cli(['init', '--etcd-client-urls', etcd], {
    ...env,
    MONITOR_BACKEND_IGNORE_ALREADY_INITIALIZED: 'true',
  });
  assert.is(ignored.code, 0, show(ignored));
  const viaEnvUrl = await cli(['init'], {
    ...env,
    MONITOR_BACKEND_ETCD_CLIENT_URLS: etcd,
    MONITOR_BACKEND_IGNORE_ALREADY_INITIALIZED: 'true',
  });
  assert.is(viaEnvUrl.code, 0, `the etcd URL from the environment: ${show(viaEnvUrl)}`);
});

test('init never turns an existing user into the administrator', async () => {
  const b = await startBackend({ name: 'init-existing', init: false, logLevel: 'info' });
  backends.push(b);
  const r = await cli([
    'init',
    '--etcd-client-urls',
    b.embedded!.etcdClientUrl,
    '--cluster-admin-username',
    'agent',
    '--cluster-admin-password',
    'takeover-123',
  ]);
  assert.is(r.code, 1, show(r));
  assert.match(messageLines(r).join('\n'), /user named "agent" already exists/);
  assert.is((await login(b, 'agent', 'takeover-123')).status, 401, 'the agent user keeps its password');
});

test('missing username, missing or short password, bad API key: exit 2 naming the flag', async () => {
  // A closed port: flag errors must be reported before etcd is contacted.
  const etcd = `http://127.0.0.1:${await freePort()}`;
  const cases: Array<[string, string[], string]> = [
    ['missing username', ['--cluster-admin-password', ADMIN_PW], '--cluster-admin-username'],
    ['missing password', ['--cluster-admin-username', ADMIN_USER], '--cluster-admin-password'],
    [
      'short password',
      ['--cluster-admin-username', ADMIN_USER, '--cluster-admin-password', 'short'],
      '--cluster-admin-password',
    ],
    [
      'API key not a UUID',
      [
        '--cluster-admin-username',
        ADMIN_USER,
        '--cluster-admin-password',
        ADMIN_PW,
        '--cluster-admin-api-key',
        'not-a-uuid',
      ],
      '--cluster-admin-api-key',
    ],
  ];
  const wrong: string[] = [];
  for (const [what, args, flag] of cases) {
    const r = await cli(['init', '--etcd-client-urls', etcd, '--timeout', '1', ...args]);
    const lines = messageLines(r);
    if (r.code !== 2 || lines.length !== 1 || !lines[0]!.includes(flag))
      wrong.push(`${what}: want exit 2 and one line naming ${flag}; got ${show(r)}`);
  }
  const envShort = await cli(['init', '--etcd-client-urls', etcd, '--timeout', '1'], {
    MONITOR_BACKEND_CLUSTER_ADMIN_USERNAME: ADMIN_USER,
    MONITOR_BACKEND_CLUSTER_ADMIN_PASSWORD: 'short',
  });
  if (envShort.code !== 2 || !messageLines(envShort).join('\n').includes('--cluster-admin-password'))
    wrong.push(`short password from the environment: ${show(envShort)}`);
  assert.equal(wrong, [], wrong.join('\n\n'));
});

test('etcd unreachable: exit 1 with a clear message', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const r = await cli(initArgs(url, ['--timeout', '1']), {}, 30_000);
  assert.is(r.code, 1, show(r));
  const lines = messageLines(r);
  assert.is(lines.length, 1, show(r));
  assert.match(lines[0]!, /etcd/);
  assert.ok(lines[0]!.includes(`127.0.0.1:${port}`), `names the endpoint: ${lines[0]}`);
  assert.ok(r.ms < 15_000, `gave up after ${r.ms} ms with --timeout 1`);
});

test.run();
