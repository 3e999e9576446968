import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AllowListError,
  checkAllowed,
  commandMatches,
  loadAllowList,
  resolveExecutable,
} from '../../agent/checks/allow-list.ts';

// The agent allow list (docs/compatibility.md#allow-list): file loading and the match rule.

const dir = mkdtempSync(join(tmpdir(), 'allow-list-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
test.after(() => rmSync(dir, { recursive: true, force: true }));

const entry = (exec: string, args: string[] = [], more: Record<string, unknown> = {}) => ({
  exec,
  args,
  enable_env: false,
  ...more,
});

test('match rule: exec and each arg taken out once, only white space may remain', () => {
  const e = entry('/usr/bin/check_disk', ['-w', '80', '-c', '90']);
  assert.ok(commandMatches(e, '/usr/bin/check_disk -w 80 -c 90'));
  assert.ok(commandMatches(e, '  /usr/bin/check_disk   -c 90 -w 80 '), 'order and spacing do not matter');
  assert.ok(commandMatches(e, '/usr/bin/check_disk -w 80'), 'args absent from the command are fine');
  assert.not.ok(commandMatches(e, '/usr/bin/check_disk -w 80 -c 90 -x'));
  assert.not.ok(commandMatches(e, '/usr/bin/check_disk -w 80 -c 90; rm -rf /'));
  assert.not.ok(commandMatches(e, 'check_disk -w 80'), 'exec must appear as written');
  assert.not.ok(commandMatches(entry('echo'), 'echo hi'));
  assert.ok(commandMatches(entry('echo'), 'echo'));
});

test('checkAllowed: no list allows all with env; enable_env follows the entry; sha512 must match', () => {
  assert.equal(checkAllowed(undefined, 'anything', ''), { allowed: true, enableEnv: true });
  const exe = file('tool', '#!/bin/sh\necho ok\n');
  chmodSync(exe, 0o755);
  const sum = createHash('sha512').update('#!/bin/sh\necho ok\n').digest('hex');
  assert.equal(checkAllowed([entry(exe, ['a'], { enable_env: true, sha512: sum })], `${exe} a`, ''), {
    allowed: true,
    enableEnv: true,
  });
  assert.equal(
    checkAllowed([entry('tool', ['a'], { sha512: sum.toUpperCase() })], 'tool a', dir),
    { allowed: true, enableEnv: false },
    'found on PATH; hex case ignored',
  );
  const denied = checkAllowed([entry(exe, [], { sha512: '0'.repeat(128) })], exe, '');
  assert.is(denied.allowed, false);
  assert.match((denied as { reason: string }).reason, /sha512/);
  assert.is(checkAllowed([entry('nowhere-xyz', [], { sha512: sum })], 'nowhere-xyz', dir).allowed, false);
  // A later entry may allow what an earlier one with a wrong hash did not.
  assert.is(checkAllowed([entry(exe, [], { sha512: '0'.repeat(128) }), entry(exe)], exe, '').allowed, true);
  assert.is(checkAllowed([], 'true', '').allowed, false);
});

test('resolveExecutable: paths as given, names on PATH, directories and non-executables skipped', () => {
  const plain = file('plain', 'x');
  chmodSync(plain, 0o644);
  assert.is(resolveExecutable('plain', dir), undefined);
  assert.is(resolveExecutable('sh', '/nonexistent:/bin'), '/bin/sh');
  assert.is(resolveExecutable('/bin/sh', ''), '/bin/sh');
});

test('loadAllowList: YAML and JSON by extension; bad files give one-line AllowListError', () => {
  const y = loadAllowList(
    file('a.yaml', '- exec: /bin/true\n  args: []\n- exec: echo\n  args: [hi]\n  enable_env: true\n'),
  );
  assert.equal(y, [
    { exec: '/bin/true', args: [], enable_env: false },
    { exec: 'echo', args: ['hi'], enable_env: true },
  ]);
  const j = loadAllowList(
    file('a.json', JSON.stringify([{ exec: 'x', args: ['1'], sha512: 'a'.repeat(128) }])),
  );
  assert.is(j[0]!.sha512, 'a'.repeat(128));
  for (const [name, text, msg] of [
    ['b.json', '{"exec":"x"}', /invalid allow list/],
    ['c.json', '[{', /not valid JSON/],
    ['d.yaml', 'a: [', /not valid YAML/],
    ['e.yaml', '- exec: ""\n', /exec must not be empty/],
    ['f.yaml', '- exec: x\n  sha512: abc\n', /sha512 must be 128 hexadecimal/],
    ['g.yaml', '- exec: x\n  args: [1, 2]\n', /args must be strings/],
  ] as const) {
    assert.throws(
      () => loadAllowList(file(name, text)),
      (e: Error) => e instanceof AllowListError && msg.test(e.message) && !e.message.includes('\n'),
      name,
    );
  }
  assert.throws(() => loadAllowList(join(dir, 'missing.yaml')), /cannot read allow list/);
});

test.run();
