import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BACKEND_BIN, tempDir } from '../harness/index.ts';

// The real monitor-backend's `service install/uninstall` (docs/operations.md#backend-service):
// the systemd unit monitor-backend.service in --unit-dir or MONITOR_SYSTEMD_UNIT_DIR, naming the
// launcher, the config file (/etc/monitor/backend.yml unless -c), and no systemctl is not fatal.

const dir = tempDir('backend-service');

/** This process's environment without any MONITOR_ variable, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MONITOR_')) env[k] = v;
  return { ...env, ...extra };
}

// node runs the launcher itself, so PATH may be empty (no systemctl to find).
const run = (args: string[], env: NodeJS.ProcessEnv = cleanEnv()) =>
  spawnSync(process.execPath, [BACKEND_BIN, ...args], { encoding: 'utf8', timeout: 30_000, env, cwd: dir });

test('service install writes monitor-backend.service; uninstall removes it; no systemctl is said, not fatal', () => {
  const units = tempDir('backend-units');
  const env = cleanEnv({ PATH: tempDir('backend-empty-path') });
  const r = run(
    [
      'service',
      'install',
      '-c',
      'conf/backend.yml',
      '--log-file',
      '/var/log/monitor/backend.log',
      '--unit-dir',
      units,
    ],
    env,
  );
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, '');
  const unit = join(units, 'monitor-backend.service');
  assert.match(r.stdout, new RegExp(`^installed ${unit}$`, 'm'));
  assert.match(r.stdout, /systemctl daemon-reload not run \(systemctl not found\)/);
  assert.match(r.stdout, /does not exist yet; the monitor-backend service will not start until it does/);
  assert.match(r.stdout, /^start it with: systemctl enable --now monitor-backend.service$/m);
  const text = readFileSync(unit, 'utf8');
  const config = join(dir, 'conf/backend.yml');
  assert.ok(
    text.includes(`\nExecStart=${process.execPath} ${BACKEND_BIN} start --config-file ${config}\n`),
    text,
  );
  assert.ok(text.includes(`\n# Configuration: ${config}\n`), text);
  assert.ok(text.includes('\nDescription=monitor backend\n'));
  assert.ok(text.includes('\nEnvironmentFile=-/etc/default/monitor-backend\n'));
  assert.ok(text.includes('\nRestart=always\n'));
  assert.ok(text.includes('\nTimeoutStopSec=30\n'));
  assert.ok(
    text.includes(
      '\nStandardOutput=append:/var/log/monitor/backend.log\nStandardError=append:/var/log/monitor/backend.log\n',
    ),
  );
  assert.ok(text.includes('\nWantedBy=multi-user.target\n'));

  const u = run(['service', 'uninstall'], { ...env, MONITOR_SYSTEMD_UNIT_DIR: units });
  assert.is(u.status, 0, u.stderr);
  assert.match(u.stdout, new RegExp(`^removed ${unit}$`, 'm'));
  assert.not.ok(existsSync(unit));
  const again = run(['service', 'uninstall', '--unit-dir', units], env);
  assert.is(again.status, 0);
  assert.match(again.stdout, /is not installed; nothing to do/);
});

test('service install without -c: the backend reads /etc/monitor/backend.yml, which the unit names; MONITOR_BACKEND_CONFIG_FILE stays out', () => {
  const units = tempDir('backend-units');
  const r = run(
    ['service', 'install'],
    cleanEnv({ MONITOR_SYSTEMD_UNIT_DIR: units, MONITOR_BACKEND_CONFIG_FILE: '/not/for/the/unit.yml' }),
  );
  assert.is(r.status, 0, r.stderr);
  const text = readFileSync(join(units, 'monitor-backend.service'), 'utf8');
  assert.ok(text.includes(`\nExecStart=${process.execPath} ${BACKEND_BIN} start\n`), text);
  assert.match(text, /^# Configuration: \/etc\/monitor\/backend\.yml \(the default file/m);
  assert.not.match(text, /unit\.yml|StandardOutput/);
});

test('service: help, bad flags, unknown command, missing unit directory', () => {
  const help = run(['help', 'service']);
  assert.is(help.status, 0);
  assert.match(help.stdout, /^Usage: monitor-backend service install/);
  assert.match(run(['help']).stdout, /^ {2}service {3}install or uninstall the systemd unit/m);
  const bad = run(['service', 'install', '--unit-dir']);
  assert.is(bad.status, 2);
  assert.is(bad.stderr, 'monitor-backend: flag --unit-dir needs a value\n');
  const unknown = run(['service', 'restart']);
  assert.is(unknown.status, 2);
  assert.is(unknown.stderr, 'monitor-backend: unknown service command "restart" (install or uninstall)\n');
  const missing = run(['service', 'install', '--unit-dir', join(dir, 'nope')]);
  assert.is(missing.status, 1);
  assert.is(
    missing.stderr,
    `monitor-backend: unit directory ${join(dir, 'nope')} does not exist (--unit-dir)\n`,
  );
});

test.run();
