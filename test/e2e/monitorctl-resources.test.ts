// suite-timeout: 300
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import * as assert from 'uvu/assert';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { makeDeps } from '../../cli/deps.ts';
import { buildProgram } from '../../cli/program.ts';
import { test } from '../harness/uvu.ts';
import { ADMIN, CtlHome, startBackend, tempDir, type Backend, type CtlResult } from '../harness/index.ts';

// monitorctl's resource commands against a real backend: create, update and delete of a check, a
// namespaced and a cluster-wide resource; every output format; lists read in pages, with label and
// field selectors and across namespaces; the exit status of each failure; --help of every command;
// describe-type, completion and version.

let backend: Backend;
const home = new CtlHome();
const files = tempDir('monitorctl-files');

test.before(async () => {
  backend = await startBackend({ name: 'ctl-res', logLevel: 'warn' });
  const r = await home.run(['configure', '-n', '--url', backend.apiUrl, '--api-key', ADMIN.apiKey]);
  assert.is(r.code, 0, r.stderr);
});

test.after(async () => {
  await backend?.stop();
});

const ok = (args: string[], input?: string) => home.ok(args, input);
const json = (args: string[]) => home.json(args);
const fails = (code: number, args: string[]): Promise<CtlResult> =>
  home.expect(code, args, { oneLine: true });

test('check: create with flags, info, update by flags and by file, delete', async () => {
  assert.match(
    await ok([
      'check',
      'create',
      'web',
      '--command',
      'check-http',
      '--interval',
      '30',
      '--subscriptions',
      'linux,web',
      '--label',
      'tier=front',
      '--label',
      'team=ops',
    ]),
    /Created check "web" in namespace "default"/,
  );
  let c = await json(['check', 'info', 'web']);
  assert.is(c.command, 'check-http');
  assert.is(c.interval, 30);
  assert.equal(c.subscriptions, ['linux', 'web']);
  assert.equal(c.metadata.labels, { tier: 'front', team: 'ops' });
  await fails(5, ['check', 'create', 'web', '--command', 'x', '--interval', '5']); // exists: 409
  await ok(['check', 'update', 'web', '--interval', '45', '--publish', 'true']);
  c = await json(['check', 'info', 'web']);
  assert.is(c.interval, 45);
  assert.is(c.publish, true);
  assert.is(c.command, 'check-http', 'a flag update changes only its field');
  // A wrapped YAML file (as `--format yaml` prints) replaces the whole check.
  const yaml = await ok(['check', 'info', 'web', '--format', 'yaml']);
  const doc = parseYaml(yaml);
  assert.is(doc.type, 'CheckConfig');
  assert.is(doc.api_version, 'core/v2');
  doc.spec.command = 'check-http --tls';
  const file = join(files, 'web.json');
  writeFileSync(file, JSON.stringify(doc));
  await ok(['check', 'update', 'web', '--file', file]);
  assert.is((await json(['check', 'info', 'web'])).command, 'check-http --tls');
  // A flat body from stdin creates another.
  await ok(['check', 'create', 'db', '--file', '-'], JSON.stringify({ command: 'check-db', interval: 60 }));
  assert.is((await json(['check', 'info', 'db'])).command, 'check-db');
  const named = await fails(2, ['check', 'create', 'other', '--file', file]);
  assert.match(named.stderr, /named "web"/);
  const wrongType = join(files, 'handler.yaml');
  writeFileSync(
    wrongType,
    'type: Handler\napi_version: core/v2\nmetadata: {name: h}\nspec: {type: pipe, command: cat}\n',
  );
  await fails(2, ['check', 'create', 'h', '--file', wrongType]);
  await fails(2, ['check', 'delete', 'db']); // no terminal to confirm on
  assert.match(await ok(['check', 'delete', 'db', '--skip-confirm']), /Deleted check "db"/);
  await fails(3, ['check', 'info', 'db']);
  const gone = await fails(3, ['check', 'delete', 'db', '--skip-confirm']);
  assert.match(gone.stderr, /check "db" in namespace "default": resource not found/);
});

test('a cluster-wide resource (namespace) and a namespaced one in it (role)', async () => {
  await ok(['namespace', 'create', 'team-a']);
  assert.ok((await json(['namespaces', 'list'])).some((n: { name: string }) => n.name === 'team-a'));
  await ok(
    ['role', 'create', 'reader', '--namespace', 'team-a', '--file', '-'],
    JSON.stringify({ rules: [{ verbs: ['get', 'list'], resources: ['checks'] }] }),
  );
  const role = await json(['role', 'info', 'reader', '--namespace', 'team-a']);
  assert.is(role.metadata.namespace, 'team-a');
  assert.equal(role.rules[0].verbs, ['get', 'list']);
  assert.match(await ok(['role', 'list', '--namespace', 'team-a']), /reader\s+get,list:checks/);
  await fails(3, ['role', 'info', 'reader']); // not in the default namespace
  await ok(
    ['role', 'update', 'reader', '--namespace', 'team-a', '--file', '-'],
    JSON.stringify({ rules: [{ verbs: ['*'], resources: ['*'] }] }),
  );
  assert.equal((await json(['role', 'info', 'reader', '--namespace', 'team-a'])).rules[0].verbs, ['*']);
  const busy = await fails(5, ['namespace', 'delete', 'team-a', '--skip-confirm']); // 409: not empty
  assert.match(busy.stderr, /not empty/);
  await ok(['role', 'delete', 'reader', '--namespace', 'team-a', '--skip-confirm']);
  await ok(['namespace', 'delete', 'team-a', '--skip-confirm']);
  await fails(3, ['namespace', 'info', 'team-a']);
  // A cluster role is cluster-wide: no namespace in its path or its messages.
  await ok(
    ['cluster-role', 'create', 'auditor', '--file', '-'],
    'rules:\n  - verbs: [get]\n    resources: ["*"]\n',
  );
  assert.match(await ok(['clusterroles', 'info', 'auditor']), /Rules:\s+get:\*/);
  await ok(['cluster-role', 'delete', 'auditor', '--skip-confirm']);
});

test('every format, for a list and for one item', async () => {
  await ok(['check', 'create', 'fmt', '--command', 'true', '--interval', '10', '--label', 'k=v']);
  const table = await ok(['check', 'list']);
  const lines = table.split('\n');
  assert.match(lines[0]!, /^ Name\s+Command\s+Interval/);
  assert.match(lines[1]!, /^─+ ─+/);
  assert.ok(lines.some((l) => /^ fmt\s+true\s+10/.test(l)));
  assert.match(await ok(['check', 'list', '--show-labels']), /Labels[\s\S]*k=v/);
  assert.ok(
    (await json(['check', 'list'])).some((c: { metadata: { name: string } }) => c.metadata.name === 'fmt'),
  );
  const wrapped = (await ok(['check', 'list', '--format', 'wrapped-json'])).trim();
  const first = JSON.parse(wrapped.slice(0, wrapped.indexOf('\n}') + 2));
  assert.equal(Object.keys(first), ['type', 'api_version', 'metadata', 'spec']);
  const docs = parseAllDocuments(await ok(['check', 'list', '--format', 'yaml'])).map((d) => d.toJS());
  assert.ok(docs.every((d) => d.type === 'CheckConfig'));
  assert.ok(docs.some((d) => d.metadata.name === 'fmt' && d.spec.interval === 10));
  assert.ok(
    (await ok(['check', 'list', '--format', 'template={{ .metadata.name }}={{ .interval }}']))
      .split('\n')
      .includes('fmt=10'),
  );
  assert.match(await ok(['check', 'list', '--format', 'jsonpath={.items[*].metadata.name}']), /\bfmt\b/);
  assert.ok(
    (
      await ok([
        'check',
        'list',
        '--format',
        'jsonpath={range .items[*]}{.metadata.name}:{.metadata.labels.k}{"\\n"}{end}',
      ])
    )
      .split('\n')
      .includes('fmt:v'),
  );
  // One item
  assert.match(await ok(['check', 'info', 'fmt']), /^Name:\s+fmt$/m);
  assert.is((await json(['check', 'info', 'fmt'])).metadata.name, 'fmt');
  assert.is(JSON.parse(await ok(['check', 'info', 'fmt', '--format', 'wrapped-json'])).spec.command, 'true');
  assert.is(parseYaml(await ok(['check', 'info', 'fmt', '--format', 'yaml'])).metadata.labels.k, 'v');
  assert.is(
    await ok(['check', 'info', 'fmt', '--format', 'template={{ index .metadata.labels "k" }}']),
    'v\n',
  );
  assert.is(await ok(['check', 'info', 'fmt', '--format', 'jsonpath={.command}']), 'true\n');
  // MONITOR_FORMAT and the context's format when no flag says one
  const viaEnv = await home.run(['check', 'info', 'fmt'], { env: { MONITOR_FORMAT: 'json' } });
  assert.is(JSON.parse(viaEnv.stdout).interval, 10);
  await fails(2, ['check', 'list', '--format', 'xml']);
  await fails(2, ['check', 'list', '--format', 'template={{ .a']);
  await ok(['check', 'delete', 'fmt', '--skip-confirm']);
});

test('lists: pages of --chunk-size, label and field selectors, all namespaces', async () => {
  await ok(['namespace', 'create', 'paging']);
  for (let i = 1; i <= 7; i++)
    await ok([
      'check',
      'create',
      `p${i}`,
      '--namespace',
      'paging',
      '--command',
      'true',
      '--interval',
      String(i * 10),
      '--label',
      `parity=${i % 2 ? 'odd' : 'even'}`,
    ]);
  const names = async (...args: string[]) =>
    (
      await ok([
        'check',
        'list',
        '--namespace',
        'paging',
        '--format',
        'template={{ .metadata.name }}',
        ...args,
      ])
    )
      .trim()
      .split('\n')
      .filter(Boolean);
  const all = await names();
  assert.equal(all, ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
  // The server answers at most 2 per request: all 7 means monitorctl followed the continue header.
  assert.equal(await names('--chunk-size', '2'), all);
  assert.equal(await names('--chunk-size', '3', '--label-selector', 'parity == odd'), [
    'p1',
    'p3',
    'p5',
    'p7',
  ]);
  assert.equal(await names('--label-selector', 'parity in (even)'), ['p2', 'p4', 'p6']);
  assert.equal(await names('--field-selector', 'check.interval == 30'), ['p3']);
  assert.equal(await names('--field-selector', 'check.name matches p1'), ['p1']);
  await fails(2, ['check', 'list', '--chunk-size', '0']);
  await fails(5, ['check', 'list', '--label-selector', 'nonsense']); // the API's 400
  // Across namespaces: a Namespace column, items of both namespaces.
  await ok(['check', 'create', 'p1', '--command', 'true', '--interval', '10']);
  const across = await ok(['check', 'list', '--all-namespaces', '--chunk-size', '4']);
  assert.match(across.split('\n')[0]!, /^ Namespace\s+Name/);
  assert.ok(across.split('\n').some((l) => /^ default\s+p1\b/.test(l)));
  assert.ok(across.split('\n').some((l) => /^ paging\s+p7\b/.test(l)));
  const jp = await ok([
    'checks',
    'list',
    '--all-namespaces',
    '--format',
    'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{" "}{end}',
  ]);
  assert.ok(jp.includes('default/p1') && jp.includes('paging/p7'));
});

test('failures: not found 3, unknown type or command 2, bad API key 4; messages are one line', async () => {
  await fails(3, ['handler', 'info', 'nope']);
  await fails(3, ['event', 'info', 'no-entity', 'no-check']);
  await fails(2, ['widgets', 'list']);
  await fails(2, ['check', 'frobnicate']);
  await fails(2, ['check', 'info']); // missing name
  const denied = await home.run(['check', 'list', '--api-key', 'not-a-key']);
  assert.is(denied.code, 4);
  assert.not.ok(denied.stderr.includes('not-a-key'));
  await fails(2, ['completion', 'fish']);
});

test('--help of every command exits 0 and prints its usage', async () => {
  const paths: string[][] = [[]];
  const walk = (cmd: Command, path: string[]) => {
    for (const c of cmd.commands) {
      paths.push([...path, c.name()]);
      walk(c, [...path, c.name()]);
    }
  };
  walk(
    buildProgram(makeDeps({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, {})),
    [],
  );
  assert.ok(paths.length > 100, `${paths.length} commands`);
  // Four at a time: each is a process of its own.
  const queue = [...paths];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const r = await home.run([...p, '--help']);
        if (r.code !== 0 || !r.stdout.startsWith('Usage: monitorctl'))
          failures.push(`${p.join(' ')}: ${r.code} ${r.stderr}`);
      }
    }),
  );
  assert.equal(failures, []);
});

test('describe-type, completion and version', async () => {
  const types = await json(['describe-type', 'all']);
  const check = types.find((t: { name: string }) => t.name === 'checks');
  assert.equal(
    { api_version: check.api_version, type: check.type, namespaced: check.namespaced },
    { api_version: 'core/v2', type: 'CheckConfig', namespaced: true },
  );
  assert.ok(
    types.some(
      (t: { type: string; namespaced: boolean }) => t.type === 'ClusterRoleBinding' && !t.namespaced,
    ),
  );
  assert.match(
    await ok(['describe-type', 'ns', 'core/v2.Event']),
    /core\/v2\.Namespace[\s\S]*core\/v2\.Event/,
  );
  await fails(2, ['describe-type', 'widget']);

  const script = join(files, 'completion.bash');
  writeFileSync(script, await ok(['completion', 'bash']));
  const complete = (line: string) => {
    const words = line.split(' ');
    const r = spawnSync(
      'bash',
      [
        '-c',
        `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _monitorctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8' },
    );
    assert.is(r.status, 0, r.stderr);
    return r.stdout.trim().split('\n');
  };
  assert.equal(complete('monitorctl chec'), ['check']);
  assert.ok(complete('monitorctl checks l').includes('list'));
  assert.ok(complete('monitorctl --namespace x check list --').includes('--chunk-size'));
  assert.ok(complete('monitorctl config ').includes('use-context'));
  const zsh = await ok(['completion', 'zsh']);
  assert.match(zsh, /^#compdef monitorctl/);

  assert.match(await ok(['version']), /^monitorctl version \d+\.\d+\.\d+\n$/);
  assert.match(await ok(['--version']), /^monitorctl version \d+\.\d+\.\d+\n$/);
});

test.run();
