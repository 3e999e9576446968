// suite-timeout: 300
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { test } from '../harness/uvu.ts';
import { ADMIN, CtlHome, startBackend, tempDir, type Backend, type CtlResult } from '../harness/index.ts';

// monitorctl's file commands against real backends: create -f of every kind (multi-document YAML,
// concatenated wrapped JSON, a directory, stdin, a URL), --dry-run, a partial failure, delete -f,
// edit through $EDITOR, prune of marked resources only, bad input, and dump of one cluster restored
// into an empty one giving the same dump.

let backend: Backend;
let empty: Backend | undefined;
let server: Server | undefined;
const home = new CtlHome();
const files = tempDir('monitorctl-files');
const EDITOR_SCRIPT = fileURLToPath(new URL('./monitorctl-files/edit-script.mjs', import.meta.url));

test.before(async () => {
  backend = await startBackend({ name: 'ctl-files', logLevel: 'warn' });
  const r = await home.run(['configure', '-n', '--url', backend.apiUrl, '--api-key', ADMIN.apiKey]);
  assert.is(r.code, 0, r.stderr);
});

test.after(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await empty?.stop();
  await backend?.stop();
});

const run = (args: string[], o: { input?: string; env?: Record<string, string | undefined> } = {}) =>
  home.run(args, o);
const ok = (args: string[], input?: string) => home.ok(args, input);
const code = (n: number, args: string[], input?: string): Promise<CtlResult> =>
  home.expect(n, args, { input });
const json = (args: string[]) => home.json(args);
const write = (name: string, text: string) => {
  const p = join(files, name);
  writeFileSync(p, text);
  return p;
};
const summary = (out: string) => out.trim().split('\n').at(-1);

/** One resource of every kind create -f writes, in the namespace `ns` (which it creates). */
function everyKind(ns: string): object[] {
  const meta = (name: string) => ({ name, namespace: ns });
  const ref = (name: string, type: string) => ({ name, type, api_version: 'core/v2' });
  return [
    { type: 'Namespace', api_version: 'core/v2', metadata: {}, spec: { name: ns } },
    {
      type: 'ClusterRole',
      api_version: 'core/v2',
      metadata: { name: `${ns}-reader` },
      spec: { rules: [{ verbs: ['get', 'list'], resources: ['checks'] }] },
    },
    {
      type: 'ClusterRoleBinding',
      api_version: 'core/v2',
      metadata: { name: `${ns}-readers` },
      spec: {
        role_ref: { type: 'ClusterRole', name: `${ns}-reader` },
        subjects: [{ type: 'Group', name: 'ops' }],
      },
    },
    {
      type: 'User',
      api_version: 'core/v2',
      metadata: {},
      spec: { username: `${ns}-user`, password: 'P@ssw0rd!long', groups: ['ops'] },
    },
    {
      type: 'ldap',
      api_version: 'authentication/v2',
      metadata: { name: `${ns}-ldap` },
      spec: {
        servers: [
          {
            host: '127.0.0.1',
            binding: { user_dn: 'cn=x', password: 'y' },
            group_search: { base_dn: 'ou=groups' },
            user_search: { base_dn: 'ou=people' },
          },
        ],
      },
    },
    {
      type: 'Role',
      api_version: 'core/v2',
      metadata: meta('r'),
      spec: { rules: [{ verbs: ['get'], resources: ['checks'] }] },
    },
    {
      type: 'RoleBinding',
      api_version: 'core/v2',
      metadata: meta('rb'),
      spec: { role_ref: { type: 'Role', name: 'r' }, subjects: [{ type: 'User', name: `${ns}-user` }] },
    },
    {
      type: 'Asset',
      api_version: 'core/v2',
      metadata: meta('a'),
      spec: { url: 'https://example.com/a.tar.gz', sha512: 'a'.repeat(128) },
    },
    {
      type: 'HookConfig',
      api_version: 'core/v2',
      metadata: meta('hk'),
      spec: { command: 'ps aux', timeout: 10 },
    },
    {
      type: 'EventFilter',
      api_version: 'core/v2',
      metadata: meta('f'),
      spec: { action: 'allow', expressions: ['event.check.status != 0'] },
    },
    { type: 'Mutator', api_version: 'core/v2', metadata: meta('m'), spec: { command: 'cat' } },
    {
      type: 'Handler',
      api_version: 'core/v2',
      metadata: meta('h'),
      spec: { type: 'pipe', command: 'cat', filters: ['f'], mutator: 'm' },
    },
    {
      type: 'Pipeline',
      api_version: 'core/v2',
      metadata: meta('p'),
      spec: { workflows: [{ name: 'w', handler: ref('h', 'Handler') }] },
    },
    {
      type: 'CheckConfig',
      api_version: 'core/v2',
      metadata: { ...meta('c'), labels: { tier: 'web' } },
      spec: { command: 'true', interval: 60, subscriptions: ['linux'], publish: false, handlers: ['h'] },
    },
    {
      type: 'Silenced',
      api_version: 'core/v2',
      metadata: meta('linux:c'),
      spec: { subscription: 'linux', check: 'c' },
    },
    {
      type: 'Entity',
      api_version: 'core/v2',
      metadata: meta('proxy-1'),
      spec: { entity_class: 'proxy', subscriptions: ['linux', 'entity:proxy-1'] },
    },
  ];
}

const asYaml = (docs: object[]) => docs.map((d) => JSON.stringify(d)).join('\n---\n');
const asJsonStream = (docs: object[]) => docs.map((d) => JSON.stringify(d, null, 2)).join('\n');

test('create -f: every kind from a multi-document YAML file and from concatenated JSON', async () => {
  const yamlFile = write('every.yaml', asYaml(everyKind('ya')));
  let out = await ok(['create', '-f', yamlFile]);
  assert.is(summary(out), 'created 16, updated 0, unchanged 0, failed 0');
  assert.is((await json(['check', 'info', 'c', '--namespace', 'ya'])).command, 'true');
  assert.is((await json(['entity', 'info', 'proxy-1', '--namespace', 'ya'])).entity_class, 'proxy');
  assert.is((await json(['auth-provider', 'info', 'ya-ldap'])).metadata.name, 'ya-ldap');
  assert.equal((await json(['user', 'info', 'ya-user'])).groups, ['ops']);
  const check = await json(['check', 'info', 'c', '--namespace', 'ya']);
  assert.equal(check.metadata.labels, { tier: 'web', 'monitorctl/managed-by': 'monitorctl' });
  // Again: the same resources are left as they are (the user's password is written each time).
  out = await ok(['create', '-f', yamlFile]);
  assert.is(summary(out), 'created 0, updated 1, unchanged 15, failed 0', out);

  const jsonFile = write('every.json', asJsonStream(everyKind('js')));
  out = await ok(['create', '-f', jsonFile]);
  assert.is(summary(out), 'created 16, updated 0, unchanged 0, failed 0');
  assert.is((await json(['pipeline', 'info', 'p', '--namespace', 'js'])).workflows[0].name, 'w');
});

test('create -f: a directory with -r, stdin, and a URL; --namespace for resources without one', async () => {
  const dir = join(files, 'tree');
  mkdirSync(join(dir, 'sub'), { recursive: true });
  const check = (name: string) =>
    `type: CheckConfig\napi_version: core/v2\nmetadata: {name: ${name}}\nspec: {command: 'true', interval: 30}\n`;
  writeFileSync(join(dir, 'one.yaml'), check('dir-1'));
  writeFileSync(join(dir, 'sub', 'two.yml'), check('dir-2'));
  writeFileSync(join(dir, 'notes.txt'), 'not a resource file');
  assert.is(summary(await ok(['create', '-f', dir])), 'created 1, updated 0, unchanged 0, failed 0');
  assert.is(summary(await ok(['create', '-r', '-f', dir])), 'created 1, updated 0, unchanged 1, failed 0');
  await ok(['check', 'info', 'dir-2']);

  await ok(['create', '-f', '-', '--namespace', 'ya'], check('from-stdin'));
  assert.is((await json(['check', 'info', 'from-stdin', '--namespace', 'ya'])).metadata.namespace, 'ya');

  server = createServer((req, res) => {
    if (req.url === '/checks.yaml') res.end(check('from-url'));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  assert.is(
    summary(await ok(['create', '-f', `${base}/checks.yaml`])),
    'created 1, updated 0, unchanged 0, failed 0',
  );
  await ok(['check', 'info', 'from-url']);
  const missing = await code(2, ['create', '-f', `${base}/nothing.yaml`]);
  assert.match(missing.stderr, /cannot read http:\/\/127\.0\.0\.1:\d+\/nothing\.yaml: HTTP 404/);
});

test('create --dry-run reports created, updated and unchanged and writes nothing', async () => {
  const docs = [
    'type: CheckConfig\napi_version: core/v2\nmetadata: {name: dry-new}\nspec: {command: "true", interval: 30}',
    'type: CheckConfig\napi_version: core/v2\nmetadata: {name: dir-1}\nspec: {command: "true", interval: 30}',
    'type: CheckConfig\napi_version: core/v2\nmetadata: {name: dir-2}\nspec: {command: "false", interval: 30}',
  ];
  const file = write('dry.yaml', docs.join('\n---\n'));
  const out = await ok(['create', '--dry-run', '-f', file]);
  assert.match(out, /Would create check "dry-new" in namespace "default"/);
  assert.match(out, /Would update check "dir-2"/);
  assert.match(out, /Would leave unchanged check "dir-1"/);
  assert.is(summary(out), 'dry run (nothing written): created 1, updated 1, unchanged 1, failed 0');
  await code(3, ['check', 'info', 'dry-new']);
  assert.is((await json(['check', 'info', 'dir-2'])).command, 'true');
});

test('create -f with a bad document among good ones: the good ones are created, exit 5, summary right', async () => {
  const file = write(
    'partial.yaml',
    [
      'type: CheckConfig\nmetadata: {name: good-1}\nspec: {command: "true", interval: 30}',
      'type: CheckConfig\nmetadata: {name: bad-interval}\nspec: {command: "true", interval: -5}',
      'type: Nonsense\nmetadata: {name: what}\nspec: {}',
      'type: Handler\nmetadata: {name: good-2}\nspec: {type: pipe, command: cat}',
    ].join('\n---\n'),
  );
  const r = await code(5, ['create', '-f', file]);
  assert.is(summary(r.stdout), 'created 2, updated 0, unchanged 0, failed 2');
  const errors = r.stderr.trim().split('\n');
  assert.ok(
    errors.some((l) => l.includes(`${file}#2: CheckConfig "bad-interval"`)),
    r.stderr,
  );
  assert.ok(
    errors.some((l) => l.includes(`${file}#3: Nonsense "what": unknown type Nonsense`)),
    r.stderr,
  );
  await ok(['check', 'info', 'good-1']);
  await ok(['handler', 'info', 'good-2']);
  await code(3, ['check', 'info', 'bad-interval']);
});

test('bad input: not YAML, an unknown type, a missing file: one clear line and exit 2', async () => {
  const notYaml = write('broken.yaml', 'type: CheckConfig\nmetadata: {name: x\nspec: [');
  let r = await code(2, ['create', '-f', notYaml]);
  assert.match(r.stderr, new RegExp(`^Error: ${notYaml}#1: document: not YAML`));
  r = await code(2, ['create', '-f', write('unknown.yaml', 'type: Gadget\nmetadata: {name: g}\nspec: {}')]);
  assert.match(r.stderr, /unknown\.yaml#1: Gadget "g": unknown type Gadget/);
  assert.match(r.stdout, /failed 1/);
  r = await code(2, ['create', '-f', join(files, 'no-such.yaml')]);
  assert.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /cannot read .*no-such\.yaml: no such file or directory/);
  r = await code(2, ['create', '-f', write('not-wrapped.json', '{"command": "true"}')]);
  assert.match(r.stderr, /not a wrapped resource/);
});

test('delete -f: in reverse order; one already gone is "not found", a failure only with --strict', async () => {
  const file = write(
    'to-delete.yaml',
    [
      'type: Namespace\nmetadata: {}\nspec: {name: gone}',
      'type: CheckConfig\nmetadata: {name: c1, namespace: gone}\nspec: {command: "true", interval: 30}',
      'type: Handler\nmetadata: {name: h1, namespace: gone}\nspec: {type: pipe, command: cat}',
    ].join('\n---\n'),
  );
  await ok(['create', '-f', file]);
  await ok(['check', 'delete', 'c1', '--namespace', 'gone', '--skip-confirm']);
  const out = await ok(['delete', '-f', file]);
  assert.equal(out.trim().split('\n'), [
    'Deleted handler "h1" in namespace "gone"',
    'Not found check "c1" in namespace "gone"',
    'Deleted namespace "gone"',
    'deleted 2, not found 1, failed 0',
  ]);
  const strict = await code(5, ['delete', '--strict', '-f', file]);
  assert.is(summary(strict.stdout), 'deleted 0, not found 0, failed 3');
});

test('edit: $EDITOR (a script standing in for a person) changes the check; unchanged is "no changes"', async () => {
  await ok(['check', 'create', 'editme', '--command', 'echo before', '--interval', '30']);
  const log = join(files, 'edit.log');
  const editor = `"${process.execPath}" "${EDITOR_SCRIPT}" --an-argument`;
  let r = await run(['edit', 'check', 'editme'], {
    env: { EDITOR: editor, EDIT_LOG: log, EDIT_FROM: 'echo before', EDIT_TO: 'echo after' },
  });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /Updated check "editme"/);
  assert.is((await json(['check', 'info', 'editme'])).command, 'echo after');
  const [path, mode, args] = readFileSync(log, 'utf8').trim().split(' ');
  assert.is(mode, '600');
  assert.is(args, '--an-argument', 'EDITOR may hold arguments');
  assert.not.ok(existsSync(path!), 'the temporary file is removed');

  r = await run(['edit', 'check', 'editme', '--format', 'json'], {
    env: { VISUAL: editor, EDITOR: 'false' },
  });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /no changes/);

  // A refusal keeps the edited file and says where.
  r = await run(['edit', 'check', 'editme'], {
    env: { EDITOR: editor, EDIT_FROM: 'interval: 30', EDIT_TO: 'interval: -1' },
  });
  assert.is(r.code, 5, r.stdout + r.stderr);
  const kept = /kept in (\S+)/.exec(r.stderr)?.[1];
  assert.ok(kept && existsSync(kept), r.stderr);
  assert.match(readFileSync(kept, 'utf8'), /interval: -1/);
});

test('prune: deletes only resources create -f marked that the files no longer hold', async () => {
  const doc = (name: string) =>
    `type: CheckConfig\nmetadata: {name: ${name}, namespace: pr}\nspec: {command: "true", interval: 30}`;
  await ok(['namespace', 'create', 'pr']);
  await ok(['create', '-f', write('pr-all.yaml', [doc('keep'), doc('drop')].join('\n---\n'))]);
  await ok(['check', 'create', 'by-hand', '--namespace', 'pr', '--command', 'true', '--interval', '30']);
  const kept = write('pr-kept.yaml', doc('keep'));
  const dry = await ok(['prune', 'checks', '--namespace', 'pr', '--dry-run', '-f', kept]);
  assert.equal(dry.trim().split('\n'), [
    'Would prune check "drop" in namespace "pr"',
    'dry run (nothing deleted): pruned 1, kept 1, failed 0',
  ]);
  await ok(['check', 'info', 'drop', '--namespace', 'pr']);
  const out = await ok(['prune', 'checks,handlers', '--namespace', 'pr', '-f', kept]);
  assert.is(summary(out), 'pruned 1, kept 1, failed 0');
  await code(3, ['check', 'info', 'drop', '--namespace', 'pr']);
  await ok(['check', 'info', 'keep', '--namespace', 'pr']);
  await ok(['check', 'info', 'by-hand', '--namespace', 'pr']);
  await code(2, ['prune', 'namespaces', '-f', kept]);
});

test('dump all of a cluster, create -f into an empty one, dump again: the same bytes', async () => {
  const dumpFile = join(files, 'dump-a.yaml');
  const d1 = await ok(['dump', 'all', '--all-namespaces', '--include-secrets']);
  assert.is(d1, await ok(['dump', 'all', '--all-namespaces', '--include-secrets']), 'two dumps are the same');
  await ok(['dump', 'all', '--all-namespaces', '--include-secrets', '-f', dumpFile]);
  assert.is(readFileSync(dumpFile, 'utf8'), d1);
  const docs = parseAllDocuments(d1).map((d) => d.toJS());
  const types = docs.map((d) => d.type);
  assert.is(types[0], 'Namespace');
  assert.ok(types.indexOf('CheckConfig') > types.indexOf('Handler'));
  assert.not.ok(types.includes('Event') || types.includes('Entity'), 'state is not configuration');
  assert.not.ok(d1.includes('created_by'));
  const users = docs.filter((d) => d.type === 'User');
  assert.ok(users.length >= 2);
  for (const u of users) assert.match(u.spec.password_hash, /^scrypt\$/, `${u.spec.username} has its hash`);
  assert.not.match(await ok(['dump', 'users']), /password/, 'no hash without --include-secrets');
  const restoreFile = write('restore.yaml', d1);

  empty = await startBackend({ name: 'ctl-files-b', logLevel: 'warn' });
  const b = new CtlHome();
  assert.is((await b.run(['configure', '-n', '--url', empty.apiUrl, '--api-key', ADMIN.apiKey])).code, 0);
  const r = await b.run(['create', '-f', restoreFile]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(summary(r.stdout)!, /failed 0$/);
  const d2 = await b.run(['dump', 'all', '--all-namespaces', '--include-secrets']);
  assert.is(d2.code, 0, d2.stderr);
  assert.fixture(d2.stdout, d1);
  // A restored user logs in with the password it had in the first cluster.
  const login = await fetch(`${empty.apiUrl}/auth`, {
    headers: { Authorization: `Basic ${Buffer.from('ya-user:P@ssw0rd!long').toString('base64')}` },
  });
  assert.is(login.status, 200, 'the restored user logs in with its old password');
  // Without --include-secrets the LDAP binding password is left out.
  assert.not.match(await ok(['dump', 'auth-providers']), /password/);
});

test.run();
