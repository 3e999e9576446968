import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../proto/flags.ts';
import { agentFlags, normalizeBackendUrl } from '../../proto/schemas/agent-config.ts';
import { loadAgentConfig } from '../../agent/config.ts';
import { DEFAULT_REDACT } from '../../proto/schemas/entity.ts';
import { LOG_LEVELS } from '../../proto/log-levels.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-config-'));
const NO_FILE = join(dir, 'absent.yml');
const BIN = fileURLToPath(new URL('../../bin/monitor-agent', import.meta.url));

function yaml(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const load = (argv: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  loadAgentConfig(argv, env, { defaultConfigFile: NO_FILE });

function error(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    load(argv, env);
  } catch (e) {
    assert.instance(e, ConfigError);
    return (e as Error).message;
  }
  assert.unreachable('expected a ConfigError');
  return '';
}

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('defaults', () => {
  const c = load();
  assert.equal(c['backend-url'], ['ws://127.0.0.1:8081']);
  assert.is(c.name, hostname());
  assert.is(c.namespace, 'default');
  assert.equal(c.subscriptions, []);
  assert.equal(c.redact, DEFAULT_REDACT);
  assert.is(c.user, 'agent');
  assert.is(c.password, 'P@ssw0rd!');
  assert.is(c['keepalive-interval'], 20);
  assert.is(c['keepalive-warning-timeout'], 120);
  assert.is(c['keepalive-critical-timeout'], 0);
  assert.is(c['backend-handshake-timeout'], 15);
  assert.is(c['backend-heartbeat-interval'], 30);
  assert.is(c['backend-heartbeat-timeout'], 45);
  assert.equal([c['retry-min'], c['retry-max'], c['retry-multiplier']], [1, 120, 2]);
  assert.is(c['cache-dir'], '/var/cache/monitor/monitor-agent');
  assert.is(c.deregister, false);
  assert.is(c['log-level'], 'warn');
  assert.is(c['config-file'], NO_FILE);
});

test('precedence: flag > env > file > default', () => {
  const file = yaml(
    'prec.yml',
    'namespace: from-file\nname: file-name\nuser: file-user\nkeepalive-warning-timeout: 60\n',
  );
  const env = { MONITOR_NAMESPACE: 'from-env', MONITOR_NAME: 'env-name' };
  const c = load(['-c', file, '--namespace', 'from-flag'], env);
  assert.is(c.namespace, 'from-flag');
  assert.is(c.name, 'env-name');
  assert.is(c.user, 'file-user');
  assert.is(c['keepalive-warning-timeout'], 60);
  assert.is(c.password, 'P@ssw0rd!');
  assert.is(c['config-file'], file);
});

test('config file named by MONITOR_CONFIG_FILE; file lists and maps', () => {
  const file = yaml(
    'lists.yml',
    'subscriptions: [linux, web]\nlabels:\n  region: eu\nbackend-url:\n  - ws://a\n  - wss://b:9000\n',
  );
  const c = load([], { MONITOR_CONFIG_FILE: file });
  assert.equal(c.subscriptions, ['linux', 'web']);
  assert.equal(c.labels, { region: 'eu' });
  assert.equal(c['backend-url'], ['ws://a:8081', 'wss://b:9000']);
});

test('MONITOR_KEEPALIVE_INTERNAL sets keepalive-interval; the flag still wins', () => {
  assert.is(agentFlags.find((f) => f.name === 'keepalive-interval')!.env, 'MONITOR_KEEPALIVE_INTERNAL');
  assert.is(load([], { MONITOR_KEEPALIVE_INTERNAL: '7' })['keepalive-interval'], 7);
  assert.is(
    load(['--keepalive-interval', '9'], { MONITOR_KEEPALIVE_INTERNAL: '7' })['keepalive-interval'],
    9,
  );
});

test('MONITOR_LABELS and MONITOR_ANNOTATIONS are JSON objects', () => {
  const c = load([], {
    MONITOR_LABELS: '{"region":"eu","tier":"web"}',
    MONITOR_ANNOTATIONS: '{"Owner Team":"ops@example"}',
  });
  assert.equal(c.labels, { region: 'eu', tier: 'web' });
  assert.equal(c.annotations, { 'Owner Team': 'ops@example' });
  assert.match(error([], { MONITOR_LABELS: '{"region":' }), /--labels .*not a JSON object/);
});

test('labels on the command line; bad label keys are refused', () => {
  assert.equal(load(['--labels', 'a=1,b_2=x', '--labels', 'c=3']).labels, { a: '1', b_2: 'x', c: '3' });
  assert.is(
    error(['--labels', '1st=x']),
    'invalid value for --labels: label key "1st" must start with a letter and hold only letters, digits and "_"',
  );
  assert.match(error(['--labels', 'has-dash=x']), /label key "has-dash"/);
});

test('backend URLs: port 8081 appended, repeatable, ws/wss only', () => {
  const c = load([
    '--backend-url',
    'ws://one',
    '--backend-url',
    'wss://two.example:443',
    '--backend-url',
    'ws://[::1]',
  ]);
  assert.equal(c['backend-url'], ['ws://one:8081', 'wss://two.example:443', 'ws://[::1]:8081']);
  assert.is(normalizeBackendUrl('ws://h:80'), 'ws://h:80');
  assert.is(normalizeBackendUrl('ws://h:8081/'), 'ws://h:8081');
  assert.is(normalizeBackendUrl('ws://h/path'), 'ws://h:8081/path');
  assert.is(
    error(['--backend-url', 'http://h:8081']),
    'invalid value for --backend-url: "http://h:8081" must use the ws or wss scheme',
  );
  assert.match(error(['--backend-url', 'not a url']), /--backend-url: "not a url" is not a URL/);
  assert.equal(load([], { MONITOR_BACKEND_URL: 'ws://a,ws://b:1' })['backend-url'], [
    'ws://a:8081',
    'ws://b:1',
  ]);
});

test('keepalive timeouts', () => {
  assert.is(
    error(['--keepalive-warning-timeout', '4']),
    'invalid value for --keepalive-warning-timeout: must be at least 5 seconds',
  );
  assert.is(
    error(['--keepalive-critical-timeout', '3']),
    'invalid value for --keepalive-critical-timeout: must be 0 (off) or at least 5 seconds',
  );
  assert.is(
    error(['--keepalive-critical-timeout', '30']),
    'invalid value for --keepalive-warning-timeout: must be lower than --keepalive-critical-timeout (30)',
  );
  assert.is(
    error(['--keepalive-warning-timeout', '30', '--keepalive-critical-timeout', '30']),
    'invalid value for --keepalive-warning-timeout: must be lower than --keepalive-critical-timeout (30)',
  );
  const ok = load(['--keepalive-warning-timeout', '30', '--keepalive-critical-timeout', '60']);
  assert.equal([ok['keepalive-warning-timeout'], ok['keepalive-critical-timeout']], [30, 60]);
  assert.is(load(['--keepalive-warning-timeout', '5'])['keepalive-critical-timeout'], 0);
  assert.is(
    error(['--keepalive-interval', '1.5']),
    'invalid value for --keepalive-interval: must be a whole number',
  );
  assert.match(error(['--keepalive-interval', 'soon']), /invalid value "soon" for --keepalive-interval/);
});

test('fractional retry and heartbeat values; cross-field checks', () => {
  const c = load(['--retry-min', '0.1', '--retry-max', '0.5', '--retry-multiplier', '1.5']);
  assert.equal([c['retry-min'], c['retry-max'], c['retry-multiplier']], [0.1, 0.5, 1.5]);
  assert.is(
    error(['--retry-min', '5', '--retry-max', '2']),
    'invalid value for --retry-max: must not be lower than --retry-min (5)',
  );
  assert.is(error(['--retry-min', '0']), 'invalid value for --retry-min: must be more than 0 seconds');
  assert.is(
    error(['--backend-heartbeat-timeout', '10']),
    'invalid value for --backend-heartbeat-timeout: must be greater than --backend-heartbeat-interval (30)',
  );
});

test('other values', () => {
  const c = load([
    '--deregister',
    '--deregistration-handler',
    'dereg',
    '--log-level',
    'debug',
    '--subscriptions',
    'a,b',
    '--subscriptions',
    'c',
    '--redact',
    'token',
    '--keepalive-handlers',
    'slack,pager',
  ]);
  assert.is(c.deregister, true);
  assert.is(c['deregistration-handler'], 'dereg');
  assert.is(c['log-level'], 'debug');
  assert.equal(c.subscriptions, ['a', 'b', 'c']);
  assert.equal(c.redact, ['token']);
  assert.equal(c['keepalive-handlers'], ['slack', 'pager']);
  assert.is(load([], { MONITOR_DEREGISTER: 'true' }).deregister, true);
  assert.match(
    error(['--log-level', 'loud']),
    /^invalid value for --log-level: must be one of panic, fatal, error, warn, info, debug$/,
  );
  assert.match(error(['--name', 'has space']), /^invalid value for --name: /);
  assert.match(error(['--subscriptions', 'bad sub']), /^invalid value for --subscriptions: "bad sub"/);
  assert.is(error(['--nope']), 'unknown flag: --nope');
  assert.is(error(['extra']), 'unexpected argument "extra"');
});

test('missing explicit config file is an error; missing default file is fine', () => {
  const missing = join(dir, 'nope.yml');
  assert.is(error(['--config-file', missing]), `config file ${missing} does not exist (--config-file)`);
  assert.match(error([], { MONITOR_CONFIG_FILE: missing }), /does not exist/);
  assert.is(load()['config-file'], NO_FILE);
});

test('bad config files', () => {
  assert.match(error(['-c', yaml('unknown.yml', 'colour: blue\n')]), /unknown setting "colour"/);
  assert.match(error(['-c', yaml('broken.yml', 'name: [\n')]), /is not valid YAML/);
  assert.match(
    error(['-c', yaml('badval.yml', 'keepalive-warning-timeout: 2\n')]),
    /--keepalive-warning-timeout: must be at least 5/,
  );
});

test('the real binary: exit code 2 and one line on stderr', () => {
  const r = spawnSync(BIN, ['start', '--keepalive-warning-timeout', '3'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.is(r.status, 2);
  assert.is(r.stdout, '');
  assert.is(
    r.stderr,
    'monitor-agent: invalid value for --keepalive-warning-timeout: must be at least 5 seconds\n',
  );
});

test('the real binary: version, help, unknown command', () => {
  const version = spawnSync(BIN, ['version'], { encoding: 'utf8', timeout: 20_000 });
  assert.is(version.status, 0);
  assert.match(version.stdout, /^monitor-agent version \d+\.\d+\.\d+\S*\n$/);
  const help = spawnSync(BIN, ['start', '--help'], { encoding: 'utf8', timeout: 20_000 });
  assert.is(help.status, 0);
  assert.match(help.stdout, /--keepalive-interval int .*\[MONITOR_KEEPALIVE_INTERNAL\]/);
  const cmds = spawnSync(BIN, ['help'], { encoding: 'utf8', timeout: 20_000 });
  assert.is(cmds.status, 0);
  assert.match(cmds.stdout, /start .*\n.*version/);
  const unknown = spawnSync(BIN, ['launch'], { encoding: 'utf8', timeout: 20_000 });
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, /^monitor-agent: unknown command "launch"\n\nUsage: monitor-agent/);
});

test('an empty variable counts as unset', () => {
  const c = load([], {
    MONITOR_NAME: '',
    MONITOR_DEREGISTER: '',
    MONITOR_KEEPALIVE_INTERNAL: '',
    MONITOR_CONFIG_FILE: '',
  });
  assert.equal(
    [c.name, c.deregister, c['keepalive-interval'], c['config-file']],
    [hostname(), false, 20, NO_FILE],
  );
});

test('deprecated spellings: --id and --keepalive-timeout, on the command line and in files', () => {
  const c = load(['--id', 'old-name', '--keepalive-timeout', '40']);
  assert.is(c.name, 'old-name');
  assert.is(c['keepalive-warning-timeout'], 40);
  const f = load(['-c', yaml('aliases.yml', 'id: file-name\nkeepalive-timeout: 50\n')]);
  assert.equal([f.name, f['keepalive-warning-timeout']], ['file-name', 50]);
  assert.is(load(['--id', 'old', '--name', 'new']).name, 'new');
  assert.is(
    error(['--keepalive-timeout', '3']),
    'invalid value for --keepalive-warning-timeout: must be at least 5 seconds',
  );
});

test('ports from 1 to 65535', () => {
  for (const flag of ['--api-port', '--socket-port', '--statsd-metrics-port']) {
    assert.is(error([flag, '0']), `invalid value for ${flag}: must be a port from 1 to 65535`);
    assert.is(error([flag, '65536']), `invalid value for ${flag}: must be a port from 1 to 65535`);
    assert.is(error([flag, '80.5']), `invalid value for ${flag}: must be a whole number`);
  }
  const c = load(['--api-port', '1', '--socket-port', '65535']);
  assert.equal([c['api-port'], c['socket-port']], [1, 65535]);
  assert.is(
    error([], { MONITOR_API_PORT: '99999' }),
    'invalid value for --api-port: must be a port from 1 to 65535',
  );
});

test('cert-file and key-file go together', () => {
  assert.is(
    error(['--cert-file', '/a.pem']),
    'invalid value for --cert-file: must be given together with --key-file',
  );
  assert.is(
    error(['--key-file', '/a.key']),
    'invalid value for --cert-file: must be given together with --key-file',
  );
  const c = load(['--cert-file', '/a.pem', '--key-file', '/a.key']);
  assert.equal([c['cert-file'], c['key-file']], ['/a.pem', '/a.key']);
});

test('MONITOR_ANNOTATIONS: bad JSON or a non-object is a clear error; values become strings', () => {
  assert.is(
    error([], { MONITOR_ANNOTATIONS: '{"a": }' }),
    'invalid value for --annotations (from environment variable MONITOR_ANNOTATIONS): not a JSON object',
  );
  assert.match(
    error([], { MONITOR_ANNOTATIONS: '[1,2]' }),
    /--annotations \(from environment variable MONITOR_ANNOTATIONS\)/,
  );
  assert.equal(load([], { MONITOR_LABELS: '{"n":1,"b":true}' }).labels, { n: '1', b: 'true' });
  assert.match(error([], { MONITOR_LABELS: '{"bad key":"x"}' }), /label key "bad key"/);
});

test('log levels are the spec list, each accepted', () => {
  assert.equal([...LOG_LEVELS], ['panic', 'fatal', 'error', 'warn', 'info', 'debug']);
  for (const l of LOG_LEVELS) assert.is(load(['--log-level', l])['log-level'], l);
  assert.is(load([], { MONITOR_LOG_LEVEL: 'error' })['log-level'], 'error');
});

test('backend URL schemes: ws and wss only', () => {
  for (const bad of ['https://h', 'tcp://h:1', 'h:8081'])
    assert.match(error(['--backend-url', bad]), /^invalid value for --backend-url: /);
  assert.equal(load(['--backend-url', 'wss://h'])['backend-url'], ['wss://h:8081']);
  assert.match(error(['--backend-url', 'ws://u:p@h']), /must not hold credentials/);
});

test('every flag of the spec has a MONITOR_ variable; only keepalive-interval departs from the rule', () => {
  const spec = [
    'allow-list',
    'annotations',
    'labels',
    'api-host',
    'api-port',
    'disable-api',
    'assets-burst-limit',
    'assets-rate-limit',
    'disable-assets',
    'backend-url',
    'cache-dir',
    'config-file',
    'deregister',
    'deregistration-handler',
    'detect-cloud-provider',
    'discover-processes',
    'events-burst-limit',
    'events-rate-limit',
    'insecure-skip-tls-verify',
    'keepalive-interval',
    'keepalive-warning-timeout',
    'keepalive-critical-timeout',
    'keepalive-handlers',
    'log-level',
    'name',
    'namespace',
    'user',
    'password',
    'redact',
    'cert-file',
    'key-file',
    'trusted-ca-file',
    'socket-host',
    'socket-port',
    'disable-sockets',
    'statsd-disable',
    'statsd-event-handlers',
    'statsd-flush-interval',
    'statsd-metrics-host',
    'statsd-metrics-port',
    'subscriptions',
  ];
  const names = agentFlags.map((f) => f.name);
  for (const f of spec) assert.ok(names.includes(f), `flag ${f}`);
  assert.equal(
    agentFlags.filter((f) => f.env).map((f) => [f.name, f.env]),
    [['keepalive-interval', 'MONITOR_KEEPALIVE_INTERNAL']],
  );
  assert.is(
    load([], { MONITOR_KEEPALIVE_INTERVAL: '9' })['keepalive-interval'],
    20,
    'the regular spelling is not read',
  );
  const c = load([], {
    MONITOR_DISCOVER_PROCESSES: 'true',
    MONITOR_DETECT_CLOUD_PROVIDER: '1',
    MONITOR_SOCKET_HOST: '0.0.0.0',
  });
  assert.equal(
    [c['discover-processes'], c['detect-cloud-provider'], c['socket-host']],
    [true, true, '0.0.0.0'],
  );
});

test.run();
