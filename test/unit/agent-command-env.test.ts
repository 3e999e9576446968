import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COMMAND_ENV_FILES, baseCommandEnv, parseEnvFile } from '../../agent/command-env.ts';

const dir = mkdtempSync(join(tmpdir(), 'command-env-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('default files are the Debian and RHEL ones', () => {
  assert.equal(COMMAND_ENV_FILES, ['/etc/default/monitor-agent', '/etc/sysconfig/monitor-agent']);
});

test('parses KEY=VALUE, export, comments, quotes', () => {
  const r = parseEnvFile(
    [
      '# a comment',
      '',
      'PLAIN=value',
      'export EXPORTED=yes',
      "SINGLE='it is $HOME \\n literal'",
      'DOUBLE="with \\"quotes\\" and\\nnewline"',
      'TRAILING=word # comment',
      'SPACED = around ',
      'EMPTY=',
      '  INDENTED=1',
      'URL=http://h/#frag',
      'not a variable line',
      '1BAD=x',
    ].join('\n'),
  );
  assert.equal(r.vars, {
    PLAIN: 'value',
    EXPORTED: 'yes',
    SINGLE: 'it is $HOME \\n literal',
    DOUBLE: 'with "quotes" and\nnewline',
    TRAILING: 'word',
    SPACED: 'around',
    EMPTY: '',
    INDENTED: '1',
    URL: 'http://h/#frag',
  });
  assert.equal(r.skipped, ['12: not a variable line', '13: 1BAD=x']);
});

test('CRLF line ends', () => {
  assert.equal(parseEnvFile('A=1\r\nB="2"\r\n').vars, { A: '1', B: '2' });
});

test('baseCommandEnv: inherited environment plus the file; the file wins; later file wins', () => {
  const deb = file('default', 'PATH=/opt/checks/bin:/usr/bin\nexport API_TOKEN="abc"\nSHARED=deb\n');
  const rhel = file('sysconfig', 'SHARED=rhel\n');
  const env = baseCommandEnv({
    files: [deb, rhel],
    baseEnv: { PATH: '/usr/bin', HOME: '/root', UNSET: undefined },
  });
  assert.equal(env, { PATH: '/opt/checks/bin:/usr/bin', HOME: '/root', API_TOKEN: 'abc', SHARED: 'rhel' });
});

test('baseCommandEnv: missing files are fine; unreadable ones and bad lines are reported without values', () => {
  const warnings: [string, Record<string, unknown>][] = [];
  const warn = (m: string, f: Record<string, unknown>) => {
    warnings.push([m, f]);
  };
  assert.equal(baseCommandEnv({ files: [join(dir, 'absent')], baseEnv: { A: '1' }, warn }), { A: '1' });
  assert.is(warnings.length, 0);
  const bad = file('bad', 'SECRET=hunter2\ngarbage hunter3\n');
  assert.equal(baseCommandEnv({ files: [bad, dir], baseEnv: {}, warn }), { SECRET: 'hunter2' });
  assert.is(warnings.length, 2);
  assert.equal(warnings[0], ['lines skipped in environment file for commands', { file: bad, lines: ['2'] }]);
  assert.is(warnings[1]![0], 'cannot read environment file for commands');
  assert.not.match(JSON.stringify(warnings), /hunter/);
});

test('baseCommandEnv: defaults to process.env', () => {
  const p = file('mine', 'FROM_FILE=1\n');
  chmodSync(p, 0o600);
  const env = baseCommandEnv({ files: [p] });
  assert.is(env.FROM_FILE, '1');
  assert.is(env.PATH, process.env.PATH);
});

test.run();
