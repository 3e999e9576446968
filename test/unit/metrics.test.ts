// suite-timeout: 60
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { METRIC_FORMATS } from '../../proto/schemas/resources/checks.ts';
import { assertValid, EXECUTED, run, simple } from './metrics/extract.ts';

// Metrics extracted from check output (agent/metrics/): the dispatch by output_metric_format, the
// graphite, influx, opentsdb and prometheus formats, and robustness across every format. The
// nagios_perfdata format is in metrics-nagios.test.ts.

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
