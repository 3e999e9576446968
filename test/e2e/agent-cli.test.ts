// suite-timeout: 240
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { envName } from '../../lib/config-loader.ts';
import { AGENT_ENV_PREFIX, agentFlags } from '../../proto/schemas/agent-config.ts';
import {
  AGENT_BIN,
  startAgent,
  startBackend,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// The real monitor-agent process: bad configuration is one line naming the flag and exit code 2;
// help lists every flag; `service install/uninstall` writes and removes a systemd unit; the
// compatibility flags --discover-processes and --detect-cloud-provider never get in the way.

const dir = tempDir('agent-cli');
const EMPTY_CONFIG = join(dir, 'empty.yml');
writeFileSync(EMPTY_CONFIG, '# nothing\n');

/** This process's environment without any MONITOR_ variable, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MONITOR_')) env[k] = v;
  return { ...env, ...extra };
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv = cleanEnv(),
  opts: { uid?: number; gid?: number } = {},
): Run {
  // node runs the script itself, so PATH may be anything (the service tests empty it).
  const r = spawnSync(process.execPath, [AGENT_BIN, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    env,
    cwd: dir,
    ...opts,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let backend: Backend | undefined;
let agent: AgentProc | undefined;

test.after(async () => {
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

const BAD: [string, string[], Record<string, string>, RegExp][] = [
  ['label key', ['--labels', 'bad-key=x'], {}, /^invalid value for --labels: label key "bad-key"/],
  [
    'MONITOR_LABELS bad JSON',
    [],
    { MONITOR_LABELS: '{"region":' },
    /^invalid value for --labels \(from environment variable MONITOR_LABELS\): not a JSON object$/,
  ],
  [
    'MONITOR_ANNOTATIONS not an object',
    [],
    { MONITOR_ANNOTATIONS: '["a"]' },
    /--annotations \(from environment variable MONITOR_ANNOTATIONS\)/,
  ],
  [
    'warning below 5',
    ['--keepalive-warning-timeout', '4'],
    {},
    /^invalid value for --keepalive-warning-timeout: must be at least 5 seconds$/,
  ],
  [
    'warning not lower than critical',
    ['--keepalive-warning-timeout', '30', '--keepalive-critical-timeout', '20'],
    {},
    /^invalid value for --keepalive-warning-timeout: must be lower than --keepalive-critical-timeout \(20\)$/,
  ],
  [
    'critical 1 to 4',
    ['--keepalive-critical-timeout', '3'],
    {},
    /^invalid value for --keepalive-critical-timeout: must be 0 \(off\) or at least 5 seconds$/,
  ],
  [
    'MONITOR_KEEPALIVE_INTERNAL',
    [],
    { MONITOR_KEEPALIVE_INTERNAL: '0' },
    /^invalid value for --keepalive-interval: must be at least 1 second$/,
  ],
  [
    'log level',
    ['--log-level', 'trace'],
    {},
    /^invalid value for --log-level: must be one of panic, fatal, error, warn, info, debug$/,
  ],
  [
    'backend URL scheme',
    ['--backend-url', 'http://h:8081'],
    {},
    /^invalid value for --backend-url: "http:\/\/h:8081" must use the ws or wss scheme$/,
  ],
  ['port 0', ['--api-port', '0'], {}, /^invalid value for --api-port: must be a port from 1 to 65535$/],
  [
    'port too high',
    ['--socket-port', '65536'],
    {},
    /^invalid value for --socket-port: must be a port from 1 to 65535$/,
  ],
  [
    'port from env',
    [],
    { MONITOR_STATSD_METRICS_PORT: '-5' },
    /^invalid value for --statsd-metrics-port: must be a port from 1 to 65535$/,
  ],
  [
    'cert without key',
    ['--cert-file', '/etc/agent.pem'],
    {},
    /^invalid value for --cert-file: must be given together with --key-file$/,
  ],
  [
    'key without cert',
    ['--key-file', '/etc/agent.key'],
    {},
    /^invalid value for --cert-file: must be given together with --key-file$/,
  ],
  [
    'not a number',
    ['--keepalive-interval', 'soon'],
    {},
    /^invalid value "soon" for --keepalive-interval \(from command line\): not a number$/,
  ],
  ['unknown flag', ['--colour', 'blue'], {}, /^unknown flag: --colour$/],
];

for (const [what, args, env, message] of BAD) {
  test(`invalid configuration, one line and exit 2: ${what}`, () => {
    const r = run(['start', '-c', EMPTY_CONFIG, ...args], cleanEnv(env));
    assert.is(r.status, 2, r.stderr);
    assert.is(r.stdout, '');
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.is(lines.length, 1, r.stderr);
    assert.ok(lines[0]!.startsWith('monitor-agent: '), lines[0]);
    assert.match(lines[0]!.slice('monitor-agent: '.length), message);
  });
}

test('config file: a given file that is missing is an error, from the flag or MONITOR_CONFIG_FILE', () => {
  const missing = join(dir, 'missing.yml');
  const r = run(['start', '--config-file', missing]);
  assert.is(r.status, 2);
  assert.is(r.stderr, `monitor-agent: config file ${missing} does not exist (--config-file)\n`);
  const e = run(['start'], cleanEnv({ MONITOR_CONFIG_FILE: missing }));
  assert.is(e.status, 2);
  assert.is(e.stderr, `monitor-agent: config file ${missing} does not exist (--config-file)\n`);
  const bad = join(dir, 'bad.yml');
  writeFileSync(bad, 'keepalive-critical-timeout: 2\n');
  const b = run(['start', '-c', bad]);
  assert.is(b.status, 2);
  assert.is(
    b.stderr,
    'monitor-agent: invalid value for --keepalive-critical-timeout: must be 0 (off) or at least 5 seconds\n',
  );
});

test('version and help', () => {
  const v = run(['version']);
  assert.is(v.status, 0);
  assert.match(v.stdout, /^monitor-agent version \S+\n$/);
  for (const args of [['help'], ['--help'], []]) {
    const h = run(args);
    assert.is(h.status, 0);
    for (const cmd of ['start', 'version', 'service', 'help'])
      assert.match(h.stdout, new RegExp(`^  ${cmd} `, 'm'));
  }
});

test('start --help lists every flag with its type, default and variable', () => {
  const h = run(['start', '--help']);
  assert.is(h.status, 0);
  assert.is(h.stderr, '');
  const lines = h.stdout.split('\n');
  for (const f of agentFlags) {
    const line = lines.find((l) => l.includes(`--${f.name} ${f.type} `));
    assert.ok(line, `--${f.name} listed`);
    assert.ok(line!.endsWith(`[${f.env ?? envName(AGENT_ENV_PREFIX, f.name)}]`), line);
    const hasDefault = f.default !== undefined && !(Array.isArray(f.default) && f.default.length === 0);
    if (hasDefault) assert.ok(line!.includes(`(default ${JSON.stringify(f.default)})`), line);
  }
  assert.match(h.stdout, /--keepalive-interval int .*\[MONITOR_KEEPALIVE_INTERNAL\]/);
  assert.match(h.stdout, /--name string .*deprecated spelling: --id/);
  assert.match(run(['help', 'start']).stdout, /--backend-url list/);
});

test('service install writes the systemd unit; uninstall removes it; no systemctl is said, not fatal', () => {
  const units = tempDir('agent-units');
  const noPath = tempDir('agent-empty-path');
  const env = cleanEnv({ PATH: noPath });
  const r = run(
    [
      'service',
      'install',
      '--config-file',
      'conf/agent.yml',
      '--log-file',
      '/var/log/monitor agent.log',
      '--unit-dir',
      units,
    ],
    env,
  );
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, '');
  const unit = join(units, 'monitor-agent.service');
  assert.match(r.stdout, new RegExp(`^installed ${unit}$`, 'm'));
  assert.match(r.stdout, /systemctl daemon-reload not run \(systemctl not found\)/);
  const text = readFileSync(unit, 'utf8');
  assert.ok(
    text.includes(
      `\nExecStart=${process.execPath} ${AGENT_BIN} start --config-file ${join(dir, 'conf/agent.yml')}\n`,
    ),
    text,
  );
  assert.ok(text.includes('\nRestart=always\n'));
  assert.ok(text.includes('\nUser=root\n'));
  assert.ok(
    text.includes(
      '\nStandardOutput=append:/var/log/monitor agent.log\nStandardError=append:/var/log/monitor agent.log\n',
    ),
  );
  assert.ok(text.includes('\nWantedBy=multi-user.target\n'));

  const u = run(['service', 'uninstall'], cleanEnv({ PATH: noPath, MONITOR_SYSTEMD_UNIT_DIR: units }));
  assert.is(u.status, 0, u.stderr);
  assert.match(u.stdout, new RegExp(`^removed ${unit}$`, 'm'));
  assert.not.ok(existsSync(unit));
  const again = run(['service', 'uninstall', '--unit-dir', units], env);
  assert.is(again.status, 0);
  assert.match(again.stdout, /is not installed; nothing to do/);
});

test('service install without a config file: the unit starts the agent with its defaults; systemctl on PATH is run', () => {
  const units = tempDir('agent-units');
  const r = run(
    ['service', 'install'],
    cleanEnv({ MONITOR_SYSTEMD_UNIT_DIR: units, MONITOR_CONFIG_FILE: '/not/for/the/unit.yml' }),
  );
  assert.is(r.status, 0, r.stderr);
  const text = readFileSync(join(units, 'monitor-agent.service'), 'utf8');
  assert.ok(text.includes(`\nExecStart=${process.execPath} ${AGENT_BIN} start\n`), text);
  assert.not.match(text, /StandardOutput/);
  // Wherever systemd is not PID 1 (containers) systemctl refuses; either outcome is reported.
  assert.match(
    r.stdout,
    /^(ran systemctl daemon-reload|systemctl daemon-reload not run \(.+\); run it when systemd is available)$/m,
  );
});

test('service: bad flags, missing unit directory, no permission', () => {
  const bad = run(['service', 'install', '--unit-dir']);
  assert.is(bad.status, 2);
  assert.is(bad.stderr, 'monitor-agent: flag --unit-dir needs a value\n');
  const unknown = run(['service', 'restart']);
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, /^monitor-agent: unknown service command "restart"/);
  const missing = run(['service', 'install', '--unit-dir', join(dir, 'nope')]);
  assert.is(missing.status, 1);
  assert.is(
    missing.stderr,
    `monitor-agent: unit directory ${join(dir, 'nope')} does not exist (--unit-dir)\n`,
  );

  const units = tempDir('agent-units-ro');
  const opts: { uid?: number; gid?: number } = {};
  // As root, run the agent as nobody against a root-owned directory; otherwise a read-only one.
  if (process.getuid?.() === 0) {
    opts.uid = 65534;
    opts.gid = 65534;
    chmodSync(units, 0o755);
  } else chmodSync(units, 0o555);
  chmodSync(dir, 0o755);
  const r = run(['service', 'install', '--unit-dir', units], cleanEnv({ HOME: dir }), opts);
  assert.is(r.status, 1, r.stderr);
  assert.is(
    r.stderr,
    `monitor-agent: cannot write ${join(units, 'monitor-agent.service')}: permission denied (run as root)\n`,
  );
});

test('--discover-processes warns and goes on; --detect-cloud-provider does not delay registration', async () => {
  backend = await startBackend({ name: 'agent-cli' });
  agent = await startAgent({
    name: 'cli-cloud',
    backendUrls: backend.agentUrl,
    extraArgs: ['--detect-cloud-provider', '--discover-processes'],
  });
  const entity = await waitFor(
    async () => {
      const r = await backend!.get('/api/core/v2/namespaces/default/entities/cli-cloud');
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 20_000, what: 'the entity' },
  );
  assert.type(entity.system.cloud_provider, 'string');
  assert.ok(['', 'aws', 'gcp', 'azure'].includes(entity.system.cloud_provider));
  const warn = agent.proc
    .jsonLines('stderr')
    .find((l) => l.level === 'warn' && /process discovery is unavailable/.test(l.msg));
  assert.ok(warn, 'warning about process discovery');
});

test.run();
