import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { helpText, mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import {
  BACKEND_ENV_PREFIX,
  BackendConfig,
  backendFlags,
  UpgradeConfig,
  upgradeFlags,
} from '../../proto/schemas/backend-config.ts';
import { tempDir } from '../harness/tmp.ts';

// The upgrade note of release 5.1.0 (spec section 9, docs/operations.md#upgrades): the backend's
// default state directory is /var/lib/monitor/monitor-backend, and `state-dir` in the config file
// keeps another one (the older /var/lib/monitor). Loaded as the programs load their flags, with
// the default config file path pointed at a file of this test (never the host's /etc/monitor).

const DEFAULT_STATE_DIR = '/var/lib/monitor/monitor-backend';

function load<S extends typeof BackendConfig | typeof UpgradeConfig>(
  schema: S,
  specs: typeof backendFlags,
  argv: string[],
  configFile: string,
  env: NodeJS.ProcessEnv = {},
) {
  return validateConfig(
    schema,
    mergeSources({
      specs,
      args: parseArgv(argv, specs),
      env,
      envPrefix: BACKEND_ENV_PREFIX,
      configFileFlag: 'config-file',
      defaultConfigFile: configFile,
    }),
  );
}

const noFile = () => join(tempDir('state-dir'), 'backend.yml');

test('the default state dir is /var/lib/monitor/monitor-backend, for start and upgrade alike', () => {
  assert.is(load(BackendConfig, backendFlags, [], noFile())['state-dir'], DEFAULT_STATE_DIR);
  assert.is(load(UpgradeConfig, upgradeFlags, [], noFile())['state-dir'], DEFAULT_STATE_DIR);
  assert.match(helpText('usage', backendFlags, BACKEND_ENV_PREFIX), `(default "${DEFAULT_STATE_DIR}")`);
});

test('state-dir in the config file keeps the older /var/lib/monitor; the flag and the environment still win', () => {
  const file = noFile();
  writeFileSync(file, 'state-dir: /var/lib/monitor\n');
  assert.is(load(BackendConfig, backendFlags, [], file)['state-dir'], '/var/lib/monitor');
  assert.is(
    load(BackendConfig, backendFlags, [], file, { MONITOR_BACKEND_STATE_DIR: '/srv/monitor' })['state-dir'],
    '/srv/monitor',
  );
  assert.is(load(BackendConfig, backendFlags, ['--state-dir', '/tmp/x'], file)['state-dir'], '/tmp/x');
});

test.run();
