// suite-timeout: 60
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { extractMetrics } from '../../agent/metrics/index.ts';
import { METRIC_FORMATS } from '../../proto/schemas/resources/checks.ts';
import { type MetricPoint } from '../../agent/metrics/point.ts';

const EXECUTED = 1700000000;
const run = (format: string, output: string, tags?: { name: string; value: string }[]) =>
  extractMetrics(format, output, { executed: EXECUTED, tags });
const simple = (points: MetricPoint[]) => points.map((p) => [p.name, p.value, p.timestamp]);

function assertValid(points: MetricPoint[]): void {
  for (const p of points) {
    assert.ok(Number.isFinite(p.value), `finite value for ${p.name}`);
    assert.ok(Number.isInteger(p.timestamp), `integer timestamp for ${p.name}`);
    assert.type(p.name, 'string');
    assert.ok(Array.isArray(p.tags));
  }
}

// ---- dispatch ----

test('an unknown format gives no points and one error', () => {
  const r = run('collectd', 'a 1 2');
  assert.equal(r.points, []);
  assert.is(r.errors.length, 1);
  assert.match(r.errors[0]!, /unknown output_metric_format "collectd"/);
  assert.is(run('__proto__', 'x').errors.length, 1);
  assert.is(run('toString', 'x').errors.length, 1);
});

test('every format accepts empty output without points or errors', () => {
  for (const f of METRIC_FORMATS) assert.equal(run(f, ''), { points: [], errors: [] }, f);
});

test('the check tags are appended after the point tags, on every point', () => {
  const tags = [{ name: 'env', value: 'prod' }];
  const r = run('graphite_plaintext', 'a;dc=x 1 1700000001\nb 2 1700000002', tags);
  assert.equal(r.points[0]!.tags, [
    { name: 'dc', value: 'x' },
    { name: 'env', value: 'prod' },
  ]);
  assert.equal(r.points[1]!.tags, [{ name: 'env', value: 'prod' }]);
  assert.is.not(r.points[1]!.tags, tags, 'points do not alias the caller array');
  const n = run('nagios_perfdata', 'OK | a=1 b=2', tags);
  assert.equal(
    n.points.map((p) => p.tags),
    [tags, tags],
  );
});

test('the errors list is bounded for garbage output', () => {
  const r = run('graphite_plaintext', Array.from({ length: 500 }, (_, i) => `junk${i}`).join('\n'));
  assert.is(r.points.length, 0);
  assert.is(r.errors.length, 21);
  assert.match(r.errors[20]!, /480 more errors/);
});

// ---- nagios_perfdata ----

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

// ---- graphite_plaintext ----

test('graphite: path value timestamp lines', () => {
  const r = run(
    'graphite_plaintext',
    'host01.cpu.user 12.5 1700000100\nhost01.cpu.system 3 1700000100\n\n  host01.load 0.5   1700000101  \n',
  );
  assert.equal(r.errors, []);
  assert.equal(simple(r.points), [
    ['host01.cpu.user', 12.5, 1700000100],
    ['host01.cpu.system', 3, 1700000100],
    ['host01.load', 0.5, 1700000101],
  ]);
  assertValid(r.points);
});

test('graphite: tagged series, -1 timestamp, fractional timestamp', () => {
  const r = run(
    'graphite_plaintext',
    'disk.used;datacenter=dc1;rack=a1;server=web01 42 1700000000\nx -1.5e2 -1\ny 1 1700000000.75',
  );
  assert.equal(r.errors, []);
  assert.equal(r.points[0], {
    name: 'disk.used',
    value: 42,
    timestamp: 1700000000,
    tags: [
      { name: 'datacenter', value: 'dc1' },
      { name: 'rack', value: 'a1' },
      { name: 'server', value: 'web01' },
    ],
  });
  assert.equal(simple(r.points.slice(1)), [
    ['x', -150, EXECUTED],
    ['y', 1, 1700000000],
  ]);
});

test('graphite: bad lines are skipped and reported with their line number', () => {
  const r = run(
    'graphite_plaintext',
    [
      'ok 1 1700000000',
      'two fields',
      'a b 1700000000',
      'a 1 soon',
      'a nan 1700000000',
      'a 1 -5',
      ';t=1 1 1700000000',
      'a;bad 1 1700000000',
      'a;k= 1 1700000000',
      'a 1 2 3',
      'ok2 2 1700000001',
    ].join('\n'),
  );
  assert.equal(simple(r.points), [
    ['ok', 1, 1700000000],
    ['ok2', 2, 1700000001],
  ]);
  assert.is(r.errors.length, 9);
  assert.match(r.errors[0]!, /^graphite_plaintext line 2: /);
  assert.match(r.errors[8]!, /^graphite_plaintext line 10: /);
});

// ---- influxdb_line ----

test('influx: measurement, tags, several fields, ns timestamp', () => {
  const r = run(
    'influxdb_line',
    'cpu,host=server01,region=us-west usage_idle=91.5,usage_user=3i,ok=true,down=F 1700000123999999999',
  );
  assert.equal(r.errors, []);
  const tags = [
    { name: 'host', value: 'server01' },
    { name: 'region', value: 'us-west' },
  ];
  assert.equal(r.points, [
    { name: 'cpu.usage_idle', value: 91.5, timestamp: 1700000123, tags },
    { name: 'cpu.usage_user', value: 3, timestamp: 1700000123, tags },
    { name: 'cpu.ok', value: 1, timestamp: 1700000123, tags },
    { name: 'cpu.down', value: 0, timestamp: 1700000123, tags },
  ]);
});

test('influx: no timestamp uses executed; unsigned; string fields skipped; comments skipped', () => {
  const r = run(
    'influxdb_line',
    '# a comment\nmem free=12u,msg="hello, world = \\"x\\"",used=-1.5e3\n\nweather temp=1',
  );
  assert.equal(r.errors, []);
  assert.equal(simple(r.points), [
    ['mem.free', 12, EXECUTED],
    ['mem.used', -1500, EXECUTED],
    ['weather.temp', 1, EXECUTED],
  ]);
});

test('influx: escaped commas, spaces and equals signs', () => {
  const r = run('influxdb_line', 'disk\\ io,path=C:\\,\\ x,k\\=1=v\\ w read\\ bytes=5i 1700000000000000000');
  assert.equal(r.errors, []);
  assert.equal(r.points, [
    {
      name: 'disk io.read bytes',
      value: 5,
      timestamp: 1700000000,
      tags: [
        { name: 'path', value: 'C:, x' },
        { name: 'k=1', value: 'v w' },
      ],
    },
  ]);
});

test('influx: short ns timestamps floor to seconds', () => {
  assert.equal(run('influxdb_line', 'm v=1 999999999').points[0]!.timestamp, 0);
  assert.equal(run('influxdb_line', 'm v=1 1500000000').points[0]!.timestamp, 1);
});

test('influx: bad lines are rejected whole and reported', () => {
  const lines = [
    'good v=1',
    'nofields',
    'm,tag v=1',
    'm v=abc',
    'm v=1,w=bad',
    'm v=1 notatime',
    'm v=1 1 extra',
    'm v="unterminated',
    'm v=1.5i',
    ',t=1 v=1',
    'm =1',
    'm v=',
    'm v=-3u',
    'good2 w=2',
  ];
  const r = run('influxdb_line', lines.join('\n'));
  assert.equal(simple(r.points), [
    ['good.v', 1, EXECUTED],
    ['good2.w', 2, EXECUTED],
  ]);
  assert.is(r.errors.length, lines.length - 2);
  assert.ok(r.errors.every((e) => e.startsWith('influxdb_line line ')));
});

// ---- opentsdb_line ----

test('opentsdb: put prefix optional, tags, seconds and ms timestamps', () => {
  const r = run(
    'opentsdb_line',
    'put sys.cpu.user 1700000000 42.5 host=web01 cpu=0\nsys.load 1700000000123 0.5\nput x 1 -2',
  );
  assert.equal(r.errors, []);
  assert.equal(r.points, [
    {
      name: 'sys.cpu.user',
      value: 42.5,
      timestamp: 1700000000,
      tags: [
        { name: 'host', value: 'web01' },
        { name: 'cpu', value: '0' },
      ],
    },
    { name: 'sys.load', value: 0.5, timestamp: 1700000000, tags: [] },
    { name: 'x', value: -2, timestamp: 1, tags: [] },
  ]);
});

test('opentsdb: bad lines are skipped and reported', () => {
  const lines = [
    'a 1700000000 1',
    'put',
    'put a 1700000000',
    'a soon 1',
    'a 1700000000 x',
    'a 1700000000 1 host',
    'a 17000000001234 1',
    'a -1 1',
    'a 1700000000 NaN',
    'b 1700000000 2',
  ];
  const r = run('opentsdb_line', lines.join('\n'));
  assert.equal(simple(r.points), [
    ['a', 1, 1700000000],
    ['b', 2, 1700000000],
  ]);
  assert.is(r.errors.length, 8);
});

// ---- prometheus_text ----

const PROM = `# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"}    3 1395066363000

# Escaping in label values:
msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9

# Minimalistic line:
metric_without_timestamp_and_labels 12.47

# A weird metric from before the epoch:
something_weird{problem="division by zero"} +Inf -3982045

# A histogram, which has a pretty complex representation in the text format:
# HELP http_request_duration_seconds A histogram of the request duration.
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{le="0.05"} 24054
http_request_duration_seconds_bucket{le="+Inf"} 144320
http_request_duration_seconds_sum 53423
http_request_duration_seconds_count 144320

# Finally a summary, which has a complex representation, too:
rpc_duration_seconds{quantile="0.5"} 4773
rpc_duration_seconds{quantile="0.99"} NaN
rpc_duration_seconds_sum 1.7560473e+07
`;

test('prometheus: the exposition format example', () => {
  const r = run('prometheus_text', PROM);
  assert.equal(r.errors, []);
  assertValid(r.points);
  assert.equal(simple(r.points), [
    ['http_requests_total', 1027, 1395066363],
    ['http_requests_total', 3, 1395066363],
    ['msdos_file_access_time_seconds', 1458255915, EXECUTED],
    ['metric_without_timestamp_and_labels', 12.47, EXECUTED],
    ['http_request_duration_seconds_bucket', 24054, EXECUTED],
    ['http_request_duration_seconds_bucket', 144320, EXECUTED],
    ['http_request_duration_seconds_sum', 53423, EXECUTED],
    ['http_request_duration_seconds_count', 144320, EXECUTED],
    ['rpc_duration_seconds', 4773, EXECUTED],
    ['rpc_duration_seconds_sum', 17560473, EXECUTED],
  ]);
  assert.equal(r.points[0]!.tags, [
    { name: 'method', value: 'post' },
    { name: 'code', value: '200' },
  ]);
  assert.equal(r.points[2]!.tags, [
    { name: 'path', value: 'C:\\DIR\\FILE.TXT' },
    { name: 'error', value: 'Cannot find file:\n"FILE.TXT"' },
  ]);
  assert.equal(r.points[5]!.tags, [{ name: 'le', value: '+Inf' }]);
});

test('prometheus: trailing comma, spaces in braces, __name__ and quoted UTF-8 names, negative ms', () => {
  const r = run(
    'prometheus_text',
    'a{ x = "1" , } 2\n{__name__="b",y="2"} 3\n{"my.metric", z="3"} 4\nc 5 -1500\nd{} 6',
  );
  assert.equal(r.errors, []);
  assert.equal(
    r.points.map((p) => [p.name, p.value, p.timestamp, p.tags.map((t) => `${t.name}=${t.value}`)]),
    [
      ['a', 2, EXECUTED, ['x=1']],
      ['b', 3, EXECUTED, ['y=2']],
      ['my.metric', 4, EXECUTED, ['z=3']],
      ['c', 5, -2, []],
      ['d', 6, EXECUTED, []],
    ],
  );
});

test('prometheus: non-finite samples are skipped without an error', () => {
  const r = run('prometheus_text', 'a NaN\nb +Inf\nc -Inf\nd Inf\ne 1');
  assert.equal(simple(r.points), [['e', 1, EXECUTED]]);
  assert.equal(r.errors, []);
});

test('prometheus: bad lines are skipped and reported', () => {
  const lines = [
    'good 1',
    'nospace',
    'a{x="1"',
    'a{x=1} 1',
    'a{x="1" y="2"} 1',
    'a{="1"} 1',
    'a{x="unterminated} 1',
    'a x',
    'a 1 1.5',
    'a 1 2 3',
    '9bad 1',
    'a{x} 1',
    '{} 1',
    'good2 2',
  ];
  const r = run('prometheus_text', lines.join('\n'));
  assert.equal(simple(r.points), [
    ['good', 1, EXECUTED],
    ['good2', 2, EXECUTED],
  ]);
  assert.is(r.errors.length, lines.length - 2);
  assert.ok(r.errors.every((e) => e.startsWith('prometheus_text line ')));
});

// Real plugin output, from the monitoring-plugins package the Makefile installs.
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
  if (!existsSync(`${PLUGINS}/check_load`)) {
    console.log(`  (skipped: ${PLUGINS} not installed)`);
    return;
  }
  const cases: Array<[string, string[], string[]]> = [
    ['check_load', ['-w', '5,4,3', '-c', '10,6,4'], ['load1', 'load5', 'load15']],
    ['check_disk', ['-w', '20%', '-c', '10%', '-p', '/'], ['/']],
    ['check_procs', [], ['procs']],
    ['check_users', ['-w', '5', '-c', '10'], ['users']],
    ['check_swap', ['-w', '20%', '-c', '10%'], ['swap']],
  ];
  for (const [name, args, expected] of cases) {
    if (!existsSync(`${PLUGINS}/${name}`)) continue;
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

// ---- robustness ----

test('no format throws on hostile input', () => {
  const inputs = [
    '\0\0\0',
    '|'.repeat(1000),
    '{'.repeat(1000),
    "'".repeat(1001),
    '\\'.repeat(999),
    '"',
    '=\n=\n=',
    'a'.repeat(100000),
    '\r\n\r\n',
    '\u{1F600} 1 2',
  ];
  for (const f of METRIC_FORMATS) {
    for (const input of inputs) {
      const r = run(f, input);
      assertValid(r.points);
      assert.ok(r.errors.length <= 21);
      for (const e of r.errors) assert.ok(e.length < 400, 'error messages are short');
    }
  }
});

test('absurd timestamps are rejected, not turned into Infinity', () => {
  const huge = '9'.repeat(400);
  for (const [f, line] of [
    ['graphite_plaintext', `a 1 ${huge}`],
    ['graphite_plaintext', 'a 1 1e300'],
    ['influxdb_line', `m v=1 ${huge}`],
    ['opentsdb_line', `a ${huge} 1`],
    ['prometheus_text', `a 1 ${huge}`],
    ['prometheus_text', `a 1 -${huge}`],
  ] as const) {
    const r = run(f, line);
    assert.equal(r.points, [], `${f}: ${line.slice(0, 30)}`);
    assert.is(r.errors.length, 1, f);
  }
});

test('a large output parses into every point', () => {
  const n = 20000;
  const lines = Array.from({ length: n }, (_, i) => `m${i} ${i} 1700000000`).join('\n');
  const r = run('graphite_plaintext', lines);
  assert.is(r.points.length, n);
  assert.is(r.points[n - 1]!.value, n - 1);
});

test.run();
