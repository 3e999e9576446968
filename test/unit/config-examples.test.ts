import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type * as v from 'valibot';
import { mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import type { FlagSpec } from '../../proto/flags.ts';
import {
  AGENT_CONFIG_FILE,
  AGENT_ENV_PREFIX,
  AgentConfig,
  agentFlags,
} from '../../proto/schemas/agent-config.ts';
import {
  BACKEND_CONFIG_FILE,
  BACKEND_ENV_PREFIX,
  BackendConfig,
  backendFlags,
} from '../../proto/schemas/backend-config.ts';
import { tempDir } from '../harness/tmp.ts';

// The commented example files deploy/etc/backend.yml and deploy/etc/agent.yml cannot drift from
// the programs: every key of the flags is there once (but config-file, which a file cannot set),
// at its default, and the file with every key uncommented passes the real loader and schema. The
// README's backend flag table names exactly the backend's flags.

const root = join(import.meta.dirname, '..', '..');
const dir = tempDir('config-examples');
const EMPTY = join(dir, 'empty.yml');
writeFileSync(EMPTY, '');
/** `# key: value` lines: the keys of an example, commented out. */
const KEY_LINE = /^# ([a-z][a-z0-9-]*): (.*)$/;
/** Example values that are not the default, because the default depends on the host. */
const HOST_DEPENDENT = new Set(['name']);

function check(file: string, specs: FlagSpec[], schema: v.GenericSchema, envPrefix: string, def: string) {
  const text = readFileSync(join(root, file), 'utf8');
  const keys = text
    .split('\n')
    .map((l) => KEY_LINE.exec(l)?.[1])
    .filter((k): k is string => !!k);
  const expected = specs.map((s) => s.name).filter((n) => n !== 'config-file');
  assert.equal([...keys].sort(), [...expected].sort(), `${file}: its keys against the flags`);
  assert.is(new Set(keys).size, keys.length, `${file}: a key twice`);

  const uncommented = join(dir, file.replace(/\//g, '_'));
  writeFileSync(uncommented, text.replace(/^# ([a-z][a-z0-9-]*: .*)$/gm, '$1'));
  const load = (path: string) =>
    mergeSources({
      specs,
      args: parseArgv(['--config-file', path], specs),
      env: {},
      envPrefix,
      configFileFlag: 'config-file',
      defaultConfigFile: def,
    });
  const raw = load(uncommented);
  validateConfig(schema, raw);
  for (const s of specs)
    if (s.name !== 'config-file' && !HOST_DEPENDENT.has(s.name))
      assert.equal(raw[s.name], s.default, `${file}: ${s.name} is shown at its default`);
  // As shipped (all commented out) it sets nothing.
  const shipped = join(dir, `shipped-${file.replace(/\//g, '_')}`);
  writeFileSync(shipped, text);
  const asShipped = { ...load(shipped), 'config-file': '' };
  assert.equal(asShipped, { ...load(EMPTY), 'config-file': '' });
}

test('deploy/etc/backend.yml: every backend key, at its default; it parses with the real schema', () => {
  check('deploy/etc/backend.yml', backendFlags, BackendConfig, BACKEND_ENV_PREFIX, BACKEND_CONFIG_FILE);
});

test('deploy/etc/agent.yml: every agent key, at its default; it parses with the real schema', () => {
  check('deploy/etc/agent.yml', agentFlags, AgentConfig, AGENT_ENV_PREFIX, AGENT_CONFIG_FILE);
});

test('README: the backend flag table names every backend flag, and only those', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split('\n## Backend flags\n')[1]!.split('\n## ')[0]!;
  const rows = section.split('\n').filter((l) => l.startsWith('| `--'));
  const named = rows.flatMap((r) => [...r.split(' | ')[0]!.matchAll(/`--([a-z0-9-]+)`/g)].map((m) => m[1]!));
  assert.equal([...new Set(named)].sort(), backendFlags.map((f) => f.name).sort());
  assert.is(new Set(named).size, named.length, 'a flag in two rows');
});

test.run();
