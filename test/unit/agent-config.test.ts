import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../proto/config-loader.ts';
import { agentFlags, loadAgentConfig, normalizeBackendUrl } from '../../proto/schemas/agent-config.ts';
import { DEFAULT_REDACT } from '../../proto/schemas/entity.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-config-'));
const NO_FILE = join(dir, 'absent.yml');
const BIN = fileURLToPath(new URL('../../bin/monitor-agent', import.meta.url));

function yaml(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const load = (argv: string[] = [], env: NodeJS.ProcessEnv = {}) => loadAgentConfig(argv, env, { defaultConfigFile: NO_FILE });

function error(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  try { load(argv, env); } catch (e) {
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
  const file = yaml('prec.yml', 'namespace: from-file\nname: file-name\nuser: file-user\nkeepalive-warning-timeout: 60\n');
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
  const file = yaml('lists.yml', 'subscriptions: [linux, web]\nlabels:\n  region: eu\nbackend-url:\n  - ws://a\n  - wss://b:9000\n');
  const c = load([], { MONITOR_CONFIG_FILE: file });
  assert.equal(c.subscriptions, ['linux', 'web']);
  assert.equal(c.labels, { region: 'eu' });
  assert.equal(c['backend-url'], ['ws://a:8081', 'wss://b:9000']);
});

test('MONITOR_KEEPALIVE_INTERNAL sets keepalive-interval; the flag still wins', () => {
  assert.is(agentFlags.find((f) => f.name === 'keepalive-interval')!.env, 'MONITOR_KEEPALIVE_INTERNAL');
  assert.is(load([], { MONITOR_KEEPALIVE_INTERNAL: '7' })['keepalive-interval'], 7);
  assert.is(load(['--keepalive-interval', '9'], { MONITOR_KEEPALIVE_INTERNAL: '7' })['keepalive-interval'], 9);
});

test('MONITOR_LABELS and MONITOR_ANNOTATIONS are JSON objects', () => {
  const c = load([], { MONITOR_LABELS: '{"region":"eu","tier":"web"}', MONITOR_ANNOTATIONS: '{"Owner Team":"ops@example"}' });
  assert.equal(c.labels, { region: 'eu', tier: 'web' });
  assert.equal(c.annotations, { 'Owner Team': 'ops@example' });
  assert.match(error([], { MONITOR_LABELS: '{"region":' }), /--labels .*not a JSON object/);
});

test('labels on the command line; bad label keys are refused', () => {
  assert.equal(load(['--labels', 'a=1,b_2=x', '--labels', 'c=3']).labels, { a: '1', b_2: 'x', c: '3' });
  assert.is(error(['--labels', '1st=x']), 'invalid value for --labels: label key "1st" must start with a letter and hold only letters, digits and "_"');
  assert.match(error(['--labels', 'has-dash=x']), /label key "has-dash"/);
});

test('backend URLs: port 8081 appended, repeatable, ws/wss only', () => {
  const c = load(['--backend-url', 'ws://one', '--backend-url', 'wss://two.example:443', '--backend-url', 'ws://[::1]']);
  assert.equal(c['backend-url'], ['ws://one:8081', 'wss://two.example:443', 'ws://[::1]:8081']);
  assert.is(normalizeBackendUrl('ws://h:80'), 'ws://h:80');
  assert.is(normalizeBackendUrl('ws://h:8081/'), 'ws://h:8081');
  assert.is(normalizeBackendUrl('ws://h/path'), 'ws://h:8081/path');
  assert.is(error(['--backend-url', 'http://h:8081']), 'invalid value for --backend-url: "http://h:8081" must use the ws or wss scheme');
  assert.match(error(['--backend-url', 'not a url']), /--backend-url: "not a url" is not a URL/);
  assert.equal(load([], { MONITOR_BACKEND_URL: 'ws://a,ws://b:1' })['backend-url'], ['ws://a:8081', 'ws://b:1']);
});

test('keepalive timeouts', () => {
  assert.is(error(['--keepalive-warning-timeout', '4']), 'invalid value for --keepalive-warning-timeout: must be at least 5 seconds');
  assert.is(error(['--keepalive-critical-timeout', '3']), 'invalid value for --keepalive-critical-timeout: must be 0 (off) or at least 5 seconds');
  assert.is(error(['--keepalive-critical-timeout', '30']), 'invalid value for --keepalive-warning-timeout: must be lower than --keepalive-critical-timeout (30)');
  assert.is(error(['--keepalive-warning-timeout', '30', '--keepalive-critical-timeout', '30']),
    'invalid value for --keepalive-warning-timeout: must be lower than --keepalive-critical-timeout (30)');
  const ok = load(['--keepalive-warning-timeout', '30', '--keepalive-critical-timeout', '60']);
  assert.equal([ok['keepalive-warning-timeout'], ok['keepalive-critical-timeout']], [30, 60]);
  assert.is(load(['--keepalive-warning-timeout', '5'])['keepalive-critical-timeout'], 0);
  assert.is(error(['--keepalive-interval', '1.5']), 'invalid value for --keepalive-interval: must be a whole number');
  assert.match(error(['--keepalive-interval', 'soon']), /invalid value "soon" for --keepalive-interval/);
});

test('fractional retry and heartbeat values; cross-field checks', () => {
  const c = load(['--retry-min', '0.1', '--retry-max', '0.5', '--retry-multiplier', '1.5']);
  assert.equal([c['retry-min'], c['retry-max'], c['retry-multiplier']], [0.1, 0.5, 1.5]);
  assert.is(error(['--retry-min', '5', '--retry-max', '2']), 'invalid value for --retry-max: must not be lower than --retry-min (5)');
  assert.is(error(['--retry-min', '0']), 'invalid value for --retry-min: must be more than 0 seconds');
  assert.is(error(['--backend-heartbeat-timeout', '10']), 'invalid value for --backend-heartbeat-timeout: must be greater than --backend-heartbeat-interval (30)');
});

test('other values', () => {
  const c = load(['--deregister', '--deregistration-handler', 'dereg', '--log-level', 'debug', '--subscriptions', 'a,b', '--subscriptions', 'c',
    '--redact', 'token', '--keepalive-handlers', 'slack,pager']);
  assert.is(c.deregister, true);
  assert.is(c['deregistration-handler'], 'dereg');
  assert.is(c['log-level'], 'debug');
  assert.equal(c.subscriptions, ['a', 'b', 'c']);
  assert.equal(c.redact, ['token']);
  assert.equal(c['keepalive-handlers'], ['slack', 'pager']);
  assert.is(load([], { MONITOR_DEREGISTER: 'true' }).deregister, true);
  assert.match(error(['--log-level', 'loud']), /^invalid value for --log-level: must be one of panic, fatal, error, warn, info, debug$/);
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
  assert.match(error(['-c', yaml('badval.yml', 'keepalive-warning-timeout: 2\n')]), /--keepalive-warning-timeout: must be at least 5/);
});

test('the real binary: exit code 2 and one line on stderr', () => {
  const r = spawnSync(BIN, ['start', '--keepalive-warning-timeout', '3'], { encoding: 'utf8', timeout: 20_000 });
  assert.is(r.status, 2);
  assert.is(r.stdout, '');
  assert.is(r.stderr, 'monitor-agent: invalid value for --keepalive-warning-timeout: must be at least 5 seconds\n');
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

test.run();
