// suite-timeout: 180
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { loadAgentConfig } from '../../agent/config.ts';
import { mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import { ConfigError } from '../../proto/flags.ts';
import { agentFlags } from '../../proto/schemas/agent-config.ts';
import { BACKEND_ENV_PREFIX, BackendConfig, backendFlags } from '../../proto/schemas/backend-config.ts';
import { fuzz, jsonValue } from '../harness/fuzz.ts';
import { removeTempDir, tempDir } from '../harness/tmp.ts';

// Fuzzing the config loader of both programs in-process (issue 13) with arbitrary YAML config files:
// loading gives a valid config or throws a ConfigError, nothing else. 10,000 files per program.

const RUNS = 10_000;
const dir = tempDir('fuzz-config');
const file = join(dir, 'config.yml');

// Odd but loadable YAML (unknown tags, collection keys) must be a ConfigError or load quietly, never a
// warning the yaml library prints to the process: each one is counted and the last test asserts none.
const yamlWarnings: string[] = [];
const emitWarning = process.emitWarning;
process.emitWarning = ((warning: string | Error, ...rest: never[]) => {
  const name = warning instanceof Error ? warning.name : '';
  if (name === 'YAMLWarning' || /Keys with collection values/.test(String(warning)))
    yamlWarnings.push(String(warning));
  else emitWarning.call(process, warning, ...rest);
}) as typeof process.emitWarning;

test.after(() => {
  process.emitWarning = emitWarning;
  removeTempDir(dir);
});

/** YAML text: arbitrary text, mappings of real flag names to arbitrary values, and their lines cut or mixed. */
function yamlText(flagNames: string[]): fc.Arbitrary<string> {
  const mapping = fc
    .dictionary(fc.oneof(fc.constantFrom(...flagNames), fc.string({ maxLength: 8 })), jsonValue(), {
      maxKeys: 5,
    })
    .map((o) => stringify(o));
  const pieces = fc.constantFrom(
    ':',
    '- ',
    '  ',
    '\n',
    '{',
    '}',
    '[',
    ']',
    '"',
    "'",
    '&a',
    '*a',
    '!!binary',
    '---',
    '#',
    '|',
    '>',
    '? ',
    '%YAML 1.2\n',
    '\t',
  );
  return fc.oneof(
    fc.string({ maxLength: 60 }),
    mapping,
    fc
      .array(fc.oneof(pieces, fc.constantFrom(...flagNames), fc.string({ maxLength: 5 })), { maxLength: 20 })
      .map((p) => p.join('')),
    fc
      .tuple(mapping, fc.nat(), fc.string({ maxLength: 5 }))
      .map(([m, at, s]) => m.slice(0, at % (m.length + 1)) + s),
  );
}

function expectConfigOrConfigError(load: () => unknown): void {
  try {
    assert.type(load(), 'object');
  } catch (err) {
    if (!(err instanceof ConfigError)) throw new Error(`not a ConfigError: ${String(err)}`, { cause: err });
  }
}

test(`agent config: ${RUNS.toLocaleString('en')} arbitrary YAML files give a config or a ConfigError`, async () => {
  await fuzz(
    'agent config file',
    fc.property(yamlText(agentFlags.map((f) => f.name)), (text) => {
      writeFileSync(file, text);
      expectConfigOrConfigError(() => loadAgentConfig(['--config-file', file], {}));
    }),
    RUNS,
  );
});

test(`backend config: ${RUNS.toLocaleString('en')} arbitrary YAML files give a config or a ConfigError`, async () => {
  await fuzz(
    'backend config file',
    fc.property(yamlText(backendFlags.map((f) => f.name)), (text) => {
      writeFileSync(file, text);
      expectConfigOrConfigError(() =>
        validateConfig(
          BackendConfig,
          mergeSources({
            specs: backendFlags,
            args: parseArgv(['--config-file', file], backendFlags),
            env: {},
            envPrefix: BACKEND_ENV_PREFIX,
            configFileFlag: 'config-file',
            defaultConfigFile: file,
          }),
        ),
      );
    }),
    RUNS,
  );
});

test('unknown tags are a ConfigError naming the line; the yaml library printed no warning during the fuzzing', () => {
  for (const text of [
    'log-level: !foo debug\n',
    'name: x\nlabels: !!set {a}\n',
    'name: !!binary aGVsbG8=\n',
  ]) {
    writeFileSync(file, text);
    assert.throws(
      () => loadAgentConfig(['--config-file', file], {}),
      (e: Error) => e instanceof ConfigError && /Unresolved tag: .* at line \d+, column \d+$/.test(e.message),
      text,
    );
  }
  assert.equal(yamlWarnings.slice(0, 3), [], `${yamlWarnings.length} warnings`);
});

test.run();
