import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import { ConfigError } from '../../proto/flags.ts';
import { BACKEND_ENV_PREFIX, BackendConfig, backendFlags } from '../../proto/schemas/backend-config.ts';
import { tempDir } from '../harness/tmp.ts';

// The backend's --legacy-api-* settings through the config loader, from each source: the command
// line, MONITOR_BACKEND_* variables and the YAML file (where --legacy-api-cors may be a map).

/** The headers the legacy API sends with no --legacy-api-cors (Classic's defaults). */
const DEFAULT_LEGACY_CORS = {
  Origin: '*',
  Methods: 'GET, POST, PUT, DELETE, OPTIONS',
  Credentials: 'true',
  Headers: 'Origin, X-Requested-With, Content-Type, Accept, Authorization',
};

const dir = tempDir('legacy-api-config');
let files = 0;

function backend(argv: string[], o: { env?: NodeJS.ProcessEnv; yaml?: string } = {}) {
  let args = argv;
  if (o.yaml !== undefined) {
    const file = join(dir, `backend-${files++}.yml`);
    writeFileSync(file, o.yaml);
    args = ['--config-file', file, ...argv];
  }
  return validateConfig(
    BackendConfig,
    mergeSources({
      specs: backendFlags,
      args: parseArgv(args, backendFlags),
      env: o.env ?? {},
      envPrefix: BACKEND_ENV_PREFIX,
      configFileFlag: 'config-file',
      defaultConfigFile: '/nonexistent/backend.yml',
    }),
  );
}

/** The error of a bad setting: a ConfigError, one line, naming the flag. */
function refused(flag: string, argv: string[], o: { env?: NodeJS.ProcessEnv; yaml?: string } = {}): string {
  try {
    backend(argv, o);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `a ConfigError, not ${String(e)}`);
    const msg = (e as Error).message;
    assert.is(msg.split('\n').length, 1, `one line: ${msg}`);
    assert.ok(msg.includes(`--${flag}`), `names --${flag}: ${msg}`);
    return msg;
  }
  assert.unreachable(`${JSON.stringify(argv)} ${JSON.stringify(o)} accepted`);
  return '';
}

test('defaults: [::]:4567, no credentials, the default CORS headers, the namespace default', () => {
  const c = backend([]);
  assert.is(c['legacy-api-host'], '[::]');
  assert.is(c['legacy-api-port'], 4567);
  assert.is(c['legacy-api-user'], '');
  assert.is(c['legacy-api-password'], '');
  assert.equal(c['legacy-api-cors'], DEFAULT_LEGACY_CORS);
  assert.is(c['legacy-api-namespace'], 'default');
});

test('every setting from a flag, a MONITOR_BACKEND_* variable and the YAML file', () => {
  const flags = backend([
    ...['--legacy-api-host', '127.0.0.1', '--legacy-api-port', '14567'],
    ...['--legacy-api-user', 'u', '--legacy-api-password', 'p', '--legacy-api-namespace', 'ops'],
  ]);
  assert.equal(
    [
      flags['legacy-api-host'],
      flags['legacy-api-port'],
      flags['legacy-api-user'],
      flags['legacy-api-password'],
    ],
    ['127.0.0.1', 14567, 'u', 'p'],
  );
  assert.is(flags['legacy-api-namespace'], 'ops');
  const env = backend([], {
    env: { MONITOR_BACKEND_LEGACY_API_PORT: '4600', MONITOR_BACKEND_LEGACY_API_USER: 'e' },
  });
  assert.is(env['legacy-api-port'], 4600);
  assert.is(env['legacy-api-user'], 'e');
  const yaml = backend([], { yaml: 'legacy-api-port: 4700\nlegacy-api-password: y\n' });
  assert.is(yaml['legacy-api-port'], 4700);
  assert.is(yaml['legacy-api-password'], 'y');
  // A flag beats the variable, which beats the file.
  const all = backend(['--legacy-api-port', '1'], {
    env: { MONITOR_BACKEND_LEGACY_API_PORT: '2' },
    yaml: 'legacy-api-port: 3\n',
  });
  assert.is(all['legacy-api-port'], 1);
});

test('--legacy-api-port 0 turns the API off; out of range or not a number is refused', () => {
  assert.is(backend(['--legacy-api-port', '0'])['legacy-api-port'], 0);
  assert.is(backend([], { env: { MONITOR_BACKEND_LEGACY_API_PORT: '0' } })['legacy-api-port'], 0);
  refused('legacy-api-port', ['--legacy-api-port', '-1']);
  refused('legacy-api-port', ['--legacy-api-port', '65536']);
  refused('legacy-api-port', ['--legacy-api-port', '45.5']);
  refused('legacy-api-port', ['--legacy-api-port', 'http']);
  refused('legacy-api-port', [], { yaml: 'legacy-api-port: [4567]\n' });
});

test('--legacy-api-cors on the command line: default, off, Key=value pairs, a JSON object', () => {
  assert.equal(backend(['--legacy-api-cors', 'default'])['legacy-api-cors'], DEFAULT_LEGACY_CORS);
  assert.equal(backend(['--legacy-api-cors', 'off'])['legacy-api-cors'], {});
  assert.equal(
    backend(['--legacy-api-cors', 'Origin=https://dash.example.com, Credentials=false'])['legacy-api-cors'],
    { Origin: 'https://dash.example.com', Credentials: 'false' },
  );
  assert.equal(backend(['--legacy-api-cors', '{"Origin":"*","Max-Age":600}'])['legacy-api-cors'], {
    Origin: '*',
    'Max-Age': '600',
  });
  assert.equal(
    backend([], { env: { MONITOR_BACKEND_LEGACY_API_CORS: 'Headers=X-Token' } })['legacy-api-cors'],
    { Headers: 'X-Token' },
  );
});

test('--legacy-api-cors as a YAML map in the config file; off and default as YAML scalars', () => {
  const map = backend([], {
    yaml: 'legacy-api-cors:\n  Origin: https://dash.example.com\n  Credentials: true\n  Max-Age: 600\n',
  });
  assert.equal(map['legacy-api-cors'], {
    Origin: 'https://dash.example.com',
    Credentials: 'true',
    'Max-Age': '600',
  });
  assert.equal(backend([], { yaml: 'legacy-api-cors: "off"\n' })['legacy-api-cors'], {});
  assert.equal(backend([], { yaml: 'legacy-api-cors: default\n' })['legacy-api-cors'], DEFAULT_LEGACY_CORS);
  // The command line still beats the file.
  assert.equal(
    backend(['--legacy-api-cors', 'off'], { yaml: 'legacy-api-cors:\n  Origin: x\n' })['legacy-api-cors'],
    {},
  );
});

test('a bad --legacy-api-cors is one line naming it, from any source', () => {
  for (const bad of [
    'Origin',
    'Origin=*,=x',
    '{"Origin": ',
    '["Origin"]',
    '{"Allow Origin":"*"}',
    '{"Origin":"a\\r\\nSet-Cookie: x=1"}',
    'Ori gin=*',
  ])
    refused('legacy-api-cors', ['--legacy-api-cors', bad]);
  refused('legacy-api-cors', [], { env: { MONITOR_BACKEND_LEGACY_API_CORS: 'nonsense' } });
  refused('legacy-api-cors', [], { yaml: 'legacy-api-cors:\n  "Origin: x": y\n' });
  refused('legacy-api-cors', [], { yaml: 'legacy-api-cors:\n  - Origin\n' });
  refused('legacy-api-cors', [], { yaml: 'legacy-api-cors:\n  Origin: "a\\nb"\n' });
});

test('a bad --legacy-api-namespace is refused naming it', () => {
  refused('legacy-api-namespace', ['--legacy-api-namespace', 'a/b']);
  refused('legacy-api-namespace', ['--legacy-api-namespace', '']);
});

test.run();
