// suite-timeout: 60
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { assertValid, EXECUTED, run, simple } from './metrics/extract.ts';

// Metrics extracted from check output in the nagios_perfdata format (agent/metrics/): perfdata of
// every unit, quoting, long text, bad items, and the output of the real plugins. The other formats
// are in metrics.test.ts.

test('nagios: check_load perfdata', () => {
  const r = run(
    'nagios_perfdata',
    'LOAD OK - total load average: 0.12, 0.08, 0.05|load1=0.120;5.000;10.000;0; load5=0.080;4.000;6.000;0; load15=0.050;3.000;4.000;0;',
  );
  assert.equal(r.errors, []);
  assert.equal(simple(r.points), [
    ['load1', 0.12, EXECUTED],
    ['load5', 0.08, EXECUTED],
    ['load15', 0.05, EXECUTED],
  ]);
  assertValid(r.points);
});

test('nagios: check_disk perfdata with a unit', () => {
  const r = run(
    'nagios_perfdata',
    'DISK OK - free space: / 12345 MB (45% inode=90%);| /=15000MB;25000;28000;0;30000\n',
  );
  assert.equal(r.errors, []);
  assert.equal(simple(r.points), [['/', 15000, EXECUTED]]);
});

test('nagios: check_procs, check_ping, check_swap, check_users style units', () => {
  const r = run(
    'nagios_perfdata',
    "PING OK - Packet loss = 0%, RTA = 0.05 ms|rta=0.050000ms;100.000000;500.000000;0.000000 pl=0%;20;60;0 'swap free'=1024KB;;;0;2048 time=1.5s users=3;5;10;0 c=12c t=7us b=10B g=2GB",
  );
  assert.equal(r.errors, []);
  assert.equal(simple(r.points), [
    ['rta', 0.05, EXECUTED],
    ['pl', 0, EXECUTED],
    ['swap free', 1024, EXECUTED],
    ['time', 1.5, EXECUTED],
    ['users', 3, EXECUTED],
    ['c', 12, EXECUTED],
    ['t', 7, EXECUTED],
    ['b', 10, EXECUTED],
    ['g', 2, EXECUTED],
  ]);
});

test("nagios: quoted labels keep spaces and '' is a quote; negative and exponent values", () => {
  const r = run(
    'nagios_perfdata',
    "OK | 'C:\\ Label: Used Space'=12.5GB;;;; 'it''s'=-3 exp=1.5e3 neg=-0.25;;",
  );
  assert.equal(r.errors, []);
  assert.equal(simple(r.points), [
    ['C:\\ Label: Used Space', 12.5, EXECUTED],
    ["it's", -3, EXECUTED],
    ['exp', 1500, EXECUTED],
    ['neg', -0.25, EXECUTED],
  ]);
});

test('nagios: perfdata on following lines after a second |', () => {
  const out = [
    'DISK OK - free space: / 3326 MB (56%); | /=2643MB;5948;5958;0;5968',
    '/ 15272 MB (77%);',
    '/boot 68 MB (69%);',
    '/home 69357 MB (27%); | /boot=68MB;88;93;0;98',
    '/home=69357MB;253404;253409;0;253414',
    "/var/log=818MB;970;975;0;980 'with space'=1",
  ].join('\n');
  const r = run('nagios_perfdata', out);
  assert.equal(r.errors, []);
  assert.equal(
    r.points.map((p) => [p.name, p.value]),
    [
      ['/', 2643],
      ['/boot', 68],
      ['/home', 69357],
      ['/var/log', 818],
      ['with space', 1],
    ],
  );
});

test('nagios: long text without a second | is not perfdata', () => {
  const r = run('nagios_perfdata', 'OK - fine|a=1\nsome detail a=2\nmore b=3');
  assert.equal(simple(r.points), [['a', 1, EXECUTED]]);
  assert.equal(r.errors, []);
});

test('nagios: no | at all is one error and no points', () => {
  const r = run('nagios_perfdata', 'CRITICAL - Socket timeout after 10 seconds');
  assert.equal(r.points, []);
  assert.is(r.errors.length, 1);
  assert.match(r.errors[0]!, /no performance data/);
  assert.equal(run('nagios_perfdata', 'OK |').points, []);
  assert.equal(run('nagios_perfdata', 'OK |  ').errors, []);
});

test('nagios: bad items are skipped and reported, good ones kept', () => {
  const r = run(
    'nagios_perfdata',
    "OK | good=1 noequals =5 bad=abc nan=NaN inf=Infinity hex=0x10 empty= 'unterminated=3",
  );
  assert.equal(simple(r.points), [['good', 1, EXECUTED]]);
  assert.is(r.errors.length, 8);
  assert.ok(r.errors.every((e) => e.startsWith('nagios_perfdata line 1: ')));
});

test('nagios: U (undetermined) values are skipped quietly', () => {
  const r = run('nagios_perfdata', 'UNKNOWN | a=U;1;2 b=4');
  assert.equal(simple(r.points), [['b', 4, EXECUTED]]);
  assert.equal(r.errors, []);
});

test('nagios: CRLF line ends and tabs', () => {
  const r = run('nagios_perfdata', 'OK |\ta=1\tb=2\r\nlong | c=3\r\nd=4\r\n');
  assert.equal(r.errors, []);
  assert.equal(
    r.points.map((p) => [p.name, p.value]),
    [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ],
  );
});

// Real plugin output, from the monitoring-plugins-basic package `make test-binaries` installs; a
// missing plugin fails the test.
const PLUGINS = '/usr/lib/nagios/plugins';

function plugin(name: string, args: string[]): string {
  try {
    return execFileSync(`${PLUGINS}/${name}`, args, { encoding: 'utf8', timeout: 20_000 });
  } catch (e) {
    // Non-zero exit (WARNING/CRITICAL) still prints the plugin output.
    return String((e as { stdout?: unknown }).stdout ?? '');
  }
}

test('nagios: perfdata of the real check_load, check_disk, check_procs, check_users, check_swap', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['check_load', ['-w', '5,4,3', '-c', '10,6,4'], ['load1', 'load5', 'load15']],
    ['check_disk', ['-w', '20%', '-c', '10%', '-p', '/'], ['/']],
    ['check_procs', [], ['procs']],
    ['check_users', ['-w', '5', '-c', '10'], ['users']],
    ['check_swap', ['-w', '20%', '-c', '10%'], ['swap']],
  ];
  for (const [name, args, expected] of cases) {
    assert.ok(
      existsSync(`${PLUGINS}/${name}`),
      `${PLUGINS}/${name} is missing: make test-binaries installs monitoring-plugins-basic`,
    );
    const out = plugin(name, args);
    const r = run('nagios_perfdata', out, [{ name: 'plugin', value: name }]);
    assert.equal(r.errors, [], `${name}: ${out}`);
    assert.equal(
      r.points.map((p) => p.name),
      expected,
      `${name}: ${out}`,
    );
    assertValid(r.points);
    for (const p of r.points) {
      assert.ok(p.value >= 0, `${name} ${p.name} >= 0`);
      assert.is(p.timestamp, EXECUTED);
      assert.equal(p.tags, [{ name: 'plugin', value: name }]);
    }
  }
});

test.run();
