import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DIST, ROOT, staleReason } from '../../deploy/build/build.ts';
import { AGENT_BIN, BACKEND_BIN, MONITORCTL_BIN, freePorts, tempDir, waitFor } from '../harness/index.ts';

// The compiled programs (docs/operations.md#compiled-programs): the launchers in bin/ run dist/*.mjs,
// which runs with neither the TypeScript sources nor a development package beside it, as in the
// production image (the dashboard's files too); and the harness has dist/ current before any suite
// starts a program.

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}
function run(argv: string[], cwd = ROOT, env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, argv, {
    encoding: 'utf8',
    timeout: 30_000,
    cwd,
    env: { ...process.env, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// A resolve hook that fails the program when it loads a TypeScript file or the tsx package: what
// runs must be the compiled file.
const NO_TYPESCRIPT_HOOKS = `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (/\\.[cm]?ts$/.test(new URL(r.url).pathname) || r.url.includes('/node_modules/tsx/'))
    throw new Error('TypeScript loaded: ' + r.url);
  return r;
}`;
const NO_TYPESCRIPT = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(
    `data:text/javascript,${encodeURIComponent(NO_TYPESCRIPT_HOOKS)}`,
  )});`,
)}`;

test('the harness leaves dist/ the build of the current sources', () => {
  assert.is(staleReason(), undefined);
  const info = JSON.parse(readFileSync(join(DIST, 'build-info.json'), 'utf8')) as {
    inputs: Record<string, string>;
  };
  for (const f of [
    'bin/agent.ts',
    'bin/backend.ts',
    'agent/cli.ts',
    'package.json',
    'proto/wire/monitor.proto',
  ])
    assert.ok(f in info.inputs, `${f} is an input of the build`);
});

test('the hook catches a program run through tsx', () => {
  const r = run(['--import', NO_TYPESCRIPT, '--import', 'tsx', join(ROOT, 'bin/agent.ts')]);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, 'TypeScript loaded');
});

test('bin/monitor-agent, bin/monitor-backend and bin/monitorctl run dist/, with no TypeScript loaded', () => {
  const agent = run(['--import', NO_TYPESCRIPT, AGENT_BIN, 'version']);
  assert.is(agent.stderr, '');
  assert.is(agent.stdout, `monitor-agent version ${VERSION}\n`);
  assert.is(agent.status, 0);
  const backend = run(['--import', NO_TYPESCRIPT, BACKEND_BIN, 'version']);
  assert.is(backend.stderr, '');
  assert.match(backend.stdout, new RegExp(`^monitor-backend version ${VERSION.replace(/\./g, '\\.')}\\n`));
  assert.is(backend.status, 0);
  const ctl = run(['--import', NO_TYPESCRIPT, MONITORCTL_BIN, 'version']);
  assert.is(ctl.stderr, '');
  assert.is(ctl.stdout, `monitorctl version ${VERSION}\n`);
  assert.is(ctl.status, 0);
});

/**
 * The production image's layout (Containerfile): package.json, the three launchers, dist/, and
 * node_modules holding only what `npm ci --omit=dev` installs (the lock file's non-dev packages).
 */
function productionLayout(): string {
  const app = tempDir('build-app');
  cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  mkdirSync(join(app, 'bin'));
  for (const b of ['monitor-agent', 'monitor-backend', 'monitorctl'])
    cpSync(join(ROOT, 'bin', b), join(app, 'bin', b));
  cpSync(DIST, join(app, 'dist'), { recursive: true });
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const prod = Object.entries(lock.packages)
    .filter(([p, meta]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(p) && !meta.dev)
    .map(([p]) => p);
  assert.ok(!prod.includes('node_modules/tsx') && !prod.includes('node_modules/esbuild'));
  for (const p of prod) {
    mkdirSync(join(app, p, '..'), { recursive: true });
    symlinkSync(join(ROOT, p), join(app, p));
  }
  return app;
}

test('the programs run from the launchers, dist/ and the production packages alone', () => {
  const app = productionLayout();
  const agent = run([join(app, 'bin/monitor-agent'), 'version'], app);
  assert.is(agent.stdout, `monitor-agent version ${VERSION}\n`, agent.stderr);
  const backend = run([join(app, 'bin/monitor-backend'), 'version'], app);
  assert.match(backend.stdout, `monitor-backend version ${VERSION}`, backend.stderr);
  // monitorctl loads its packages (commander, cli-table3, yaml, jsonpath-plus) from the production set.
  const ctl = run(
    [join(app, 'bin/monitorctl'), 'describe-type', 'checks', '--format', 'jsonpath={.items[0].type}'],
    app,
  );
  assert.is(ctl.stdout, 'CheckConfig\n', ctl.stderr);
  // The systemd unit runs the launcher the agent was started from (PATH empty: no systemctl call).
  const units = tempDir('build-units');
  const install = run([join(app, 'bin/monitor-agent'), 'service', 'install', '--unit-dir', units], app, {
    PATH: '',
  });
  assert.is(install.status, 0, install.stderr);
  const unit = readFileSync(join(units, 'monitor-agent.service'), 'utf8');
  assert.ok(unit.includes(`\nExecStart=${process.execPath} ${join(app, 'bin/monitor-agent')} start\n`), unit);
});

test('the backend serves the dashboard from dist/ and the production packages alone', async () => {
  const app = productionLayout();
  const [api, agent, etcdClient, etcdPeer, nats] = await freePorts(5);
  const proc = spawn(
    process.execPath,
    [
      join(app, 'bin/monitor-backend'),
      'start',
      ...['--state-dir', tempDir('build-dash'), '--api-host', '127.0.0.1', '--api-port', String(api)],
      ...['--agent-host', '127.0.0.1', '--agent-port', String(agent), '--legacy-api-port', '0'],
      ...['--etcd-listen-client-urls', `http://127.0.0.1:${etcdClient}`],
      ...['--etcd-listen-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--nats-listen', `127.0.0.1:${nats}`],
      ...['--log-level', 'error'],
    ],
    { cwd: app, stdio: 'ignore' },
  );
  try {
    const base = `http://127.0.0.1:${api}`;
    await waitFor(
      () =>
        fetch(`${base}/health`).then(
          (r) => r.ok || undefined,
          () => undefined,
        ),
      {
        timeoutMs: 60_000,
        what: 'the backend of the production layout',
      },
    );
    const page = await fetch(`${base}/`);
    assert.is(page.status, 200);
    const html = await page.text();
    const map = JSON.parse(/<script type="importmap">(.*?)<\/script>/.exec(html)![1]!) as {
      imports: Record<string, string>;
    };
    for (const url of [...Object.values(map.imports), '/static/app/main.js', '/static/styles/app.css'])
      assert.is((await fetch(`${base}${url}`)).status, 200, url);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
});

test('a launcher without its compiled program says how to build it', () => {
  const app = tempDir('build-missing');
  cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  mkdirSync(join(app, 'bin'));
  cpSync(join(ROOT, 'bin/monitor-agent'), join(app, 'bin/monitor-agent'));
  const r = run([join(app, 'bin/monitor-agent'), 'version'], app);
  assert.is(r.status, 1);
  assert.match(r.stderr, 'run `make build` first');
});

test.run();
