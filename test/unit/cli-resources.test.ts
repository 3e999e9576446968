import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { groupCommand } from '../../cli/commands/registry.ts';
import { makeDeps } from '../../cli/deps.ts';
import { CliError } from '../../cli/errors.ts';
import { buildProgram } from '../../cli/program.ts';
import { parseFieldValue, placeName, resourceFromText } from '../../cli/resources/body.ts';
import {
  collectionPath,
  findType,
  itemPath,
  requireType,
  typeOfWrapped,
} from '../../cli/resources/lookup.ts';
import { RESOURCE_TYPES } from '../../cli/resources/table.ts';
import { toApiBody, wrap } from '../../cli/resources/wrap.ts';

// The resource table of monitorctl: lookups, API paths, the wrapped form both ways, and bodies
// from files and flags.

const type = (name: string) => findType(name)!;

test('every type is found by its names, and no two types share one', () => {
  const seen = new Map<string, string>();
  for (const t of RESOURCE_TYPES) {
    for (const n of [t.singular, t.plural, t.segment, ...t.aliases, ...t.shortNames]) {
      const other = seen.get(n);
      assert.ok(other === undefined || other === t.plural, `${n} names ${other} and ${t.plural}`);
      seen.set(n, t.plural);
      assert.is(findType(n), t);
    }
  }
  assert.is(findType('CHECKS'), type('check'));
  assert.is(findType('ns'), type('namespaces'));
  assert.is(requireType('rolebindings').type, 'RoleBinding');
  assert.throws(
    () => requireType('widgets'),
    (e: CliError) => e.exitCode === 2 && /checks/.test(e.message),
  );
  assert.is(typeOfWrapped('HookConfig', 'core/v2'), type('hooks'));
  assert.is(typeOfWrapped('Hook', undefined), type('hooks'));
  assert.is(typeOfWrapped('oidc', 'authentication/v2'), type('auth'));
  assert.is(typeOfWrapped('CheckConfig', 'authentication/v2'), undefined);
});

test('paths: namespaced, across namespaces, cluster-wide, other API groups, events by entity and check', () => {
  assert.is(collectionPath(type('checks'), 'default'), '/api/core/v2/namespaces/default/checks');
  assert.is(collectionPath(type('checks'), undefined), '/api/core/v2/checks');
  assert.is(collectionPath(type('cluster-roles'), 'default'), '/api/core/v2/clusterroles');
  assert.is(itemPath(type('api-keys'), 'default', ['k']), '/api/core/v2/apikeys/k');
  assert.is(itemPath(type('auth'), 'x', ['ad']), '/api/enterprise/authentication/v2/authproviders/ad');
  assert.is(
    itemPath(type('events'), 'a b', ['web-1', 'cpu']),
    '/api/core/v2/namespaces/a%20b/events/web-1/cpu',
  );
  assert.is(
    itemPath(type('silenced'), 'default', ['linux:*']),
    '/api/core/v2/namespaces/default/silenced/linux%3A*',
  );
});

test('the wrapped form: made from API items, read back into API bodies', () => {
  const check = { metadata: { name: 'cpu', namespace: 'default' }, command: 'x', interval: 5 };
  const w = wrap(type('check'), check);
  assert.equal(w, {
    type: 'CheckConfig',
    api_version: 'core/v2',
    metadata: check.metadata,
    spec: { command: 'x', interval: 5 },
  });
  assert.equal(toApiBody(type('check'), w), check);
  assert.equal(wrap(type('namespace'), { name: 'ops' }), {
    type: 'Namespace',
    api_version: 'core/v2',
    metadata: {},
    spec: { name: 'ops' },
  });
  assert.equal(toApiBody(type('namespace'), wrap(type('namespace'), { name: 'ops' })), { name: 'ops' });
  const provider = {
    type: 'ldap',
    api_version: 'authentication/v2',
    metadata: { name: 'ad' },
    spec: { servers: [] },
  };
  assert.is(wrap(type('auth'), provider), provider, 'already wrapped by the API');
  assert.is(toApiBody(type('auth'), provider), provider);
});

test('bodies: files flat or wrapped of the right type, names placed, flags parsed', () => {
  const t = type('check');
  assert.equal(resourceFromText(t, '{"command": "x"}', 'f'), { command: 'x' });
  assert.equal(resourceFromText(t, 'type: CheckConfig\nspec: {command: y}\nmetadata: {name: c}\n', 'f'), {
    command: 'y',
    metadata: { name: 'c' },
  });
  assert.throws(
    () => resourceFromText(t, 'type: Handler\nspec: {}\n', 'f.yml'),
    (e: CliError) => e.exitCode === 2 && /f.yml: holds a Handler \(handlers\)/.test(e.message),
  );
  assert.throws(
    () => resourceFromText(t, '[1]', 'f'),
    (e: CliError) => /one resource/.test(e.message),
  );
  assert.throws(
    () => resourceFromText(t, '{', 'f'),
    (e: CliError) => e.exitCode === 2,
  );
  assert.equal(placeName(t, { command: 'x' }, ['c']), { command: 'x', metadata: { name: 'c' } });
  assert.equal(placeName(type('namespace'), {}, ['ops']), { name: 'ops' });
  assert.equal(placeName(type('user'), { password: 'p' }, ['ann']), { password: 'p', username: 'ann' });
  assert.equal(placeName(type('event'), { check: {} }, ['e', 'c']), { check: {} });
  assert.throws(
    () => placeName(t, { metadata: { name: 'a' } }, ['b']),
    (e: CliError) => /named "a"/.test(e.message),
  );
  const flag = (field: string) => t.fieldFlags.find((f) => f.field === field)!;
  assert.equal(parseFieldValue(flag('subscriptions'), 'a, b,,c'), ['a', 'b', 'c']);
  assert.is(parseFieldValue(flag('interval'), '30'), 30);
  assert.is(parseFieldValue(flag('publish'), 'false'), false);
  assert.equal(parseFieldValue(flag('metadata.labels'), ['a=1', 'b=x=y']), { a: '1', b: 'x=y' });
  assert.throws(
    () => parseFieldValue(flag('interval'), '1m'),
    (e: CliError) => /--interval/.test(e.message),
  );
  assert.throws(
    () => parseFieldValue(flag('metadata.labels'), ['nolabel']),
    (e: CliError) => /key=value/.test(e.message),
  );
});

test('command groups: every type has a command with its plural as an alias; others can add subcommands', () => {
  const program = buildProgram(
    makeDeps({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, {}),
  );
  for (const t of RESOURCE_TYPES) {
    const g = groupCommand(program, t.plural);
    assert.is(g.name(), t.singular);
    assert.ok(g.commands.some((c) => c.name() === 'list'));
  }
  assert.ok(groupCommand(program, 'checks').commands.some((c) => c.name() === 'execute'));
  groupCommand(program, 'check').command('sample-extra');
  assert.ok(groupCommand(program, 'checks').commands.some((c) => c.name() === 'sample-extra'));
  assert.throws(() => groupCommand(program, 'widget'), /no command group "widget"/);
});

test.run();
