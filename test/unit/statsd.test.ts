import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { parseStatsdLine, StatsdLine, type StatsdMetric } from '../../proto/schemas/statsd.ts';
import {
  GAUGE_IDLE_FLUSHES,
  MAX_SERIES,
  MAX_VALUES_PER_SERIES,
  StatsdAggregator,
  timerStats,
  type MetricPoint,
} from '../../agent/statsd/aggregator.ts';

// The StatsD line parser and the aggregator: every metric type, sample rates, tags, relative
// gauges, and lines that must be refused with a reason (never thrown).

const ok = (line: string): StatsdMetric => {
  const r = parseStatsdLine(line);
  if (typeof r === 'string') throw new Error(`"${line}" refused: ${r}`);
  return r;
};
const bad = (line: string) => {
  const r = parseStatsdLine(line);
  assert.type(r, 'string', `"${line}" should be refused, got ${JSON.stringify(r)}`);
};
const byName = (points: MetricPoint[]) => Object.fromEntries(points.map((p) => [p.name, p.value]));

test('parses every type', () => {
  assert.equal(ok('hits:3|c'), { name: 'hits', type: 'c', value: 3, rate: 1, tags: [] });
  assert.equal(ok('temp:21.5|g'), { name: 'temp', type: 'g', value: 21.5, rate: 1, tags: [] });
  assert.equal(ok('temp:+2|g'), { name: 'temp', type: 'g', value: 2, rate: 1, tags: [], relative: true });
  assert.equal(ok('temp:-2.5|g'), {
    name: 'temp',
    type: 'g',
    value: -2.5,
    rate: 1,
    tags: [],
    relative: true,
  });
  assert.is(ok('lat:320|ms').type, 'ms');
  assert.is(ok('size:1e3|h').value, 1000);
  assert.equal(ok('users:alice|s'), {
    name: 'users',
    type: 's',
    value: 0,
    member: 'alice',
    rate: 1,
    tags: [],
  });
});

test('sample rates and tags, in either order', () => {
  assert.equal(ok('hits:1|c|@0.1'), { name: 'hits', type: 'c', value: 1, rate: 0.1, tags: [] });
  assert.equal(ok('hits:1|c|#env:prod,region:eu,canary'), {
    name: 'hits',
    type: 'c',
    value: 1,
    rate: 1,
    tags: [
      { name: 'env', value: 'prod' },
      { name: 'region', value: 'eu' },
      { name: 'canary', value: '' },
    ],
  });
  const both = ok('lat:5|ms|#a:b|@0.5');
  assert.is(both.rate, 0.5);
  assert.equal(both.tags, [{ name: 'a', value: 'b' }]);
  assert.is(ok('x.y-z_1:2|c').name, 'x.y-z_1');
  assert.equal(ok('t:1|c|#url:http://x').tags, [{ name: 'url', value: 'http://x' }]);
});

test('bad lines are refused with a reason, never thrown', () => {
  for (const line of [
    '',
    'nocolon',
    ':1|c',
    'a:1',
    'a:1|',
    'a:1|x',
    'a:1|C',
    'a:abc|c',
    'a:|c',
    'a:1..2|g',
    'a:NaN|c',
    'a:Infinity|c',
    'a:1e999|c',
    'a:1|c|@0',
    'a:1|c|@2',
    'a:1|c|@-1',
    'a:1|c|@x',
    'a:1|c|#',
    'a:1|c|#,x',
    'a:1|c|#:v',
    'a:1|c|junk',
    'a:1|c|@0.5|@0.5',
    'a b:1|c',
    'a:|s',
    'a:0x10|c',
    '\u0000:1|c',
    'a:1|c|#a:b|#c:d',
    'x'.repeat(600) + ':1|c',
  ])
    bad(line);
  const r = v.safeParse(StatsdLine, 'a:1|zz');
  assert.not.ok(r.success);
  if (!r.success) assert.match(r.issues[0]!.message, /unknown type "zz"/);
  assert.ok(v.safeParse(StatsdLine, 'a:1|c').success);
  assert.not.ok(v.safeParse(StatsdLine, 42).success);
});

test('counters: sum scaled by the sample rate, and the rate per second', () => {
  const agg = new StatsdAggregator();
  agg.add(ok('hits:1|c'));
  agg.add(ok('hits:2|c'));
  agg.add(ok('hits:1|c|@0.5'));
  const points = agg.flush(1000, 10);
  assert.equal(byName(points), { 'hits.value': 5, 'hits.per_second': 0.5 });
  assert.ok(points.every((p) => p.timestamp === 1000 && p.tags.length === 0));
  assert.equal(agg.flush(1010, 10), [], 'a new interval starts empty');
});

test('timers: min, max, count, per_second, mean, median, stddev, sum, sum_squares, percentile_90', () => {
  const agg = new StatsdAggregator();
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) agg.add(ok(`lat:${n}|ms`));
  agg.add(ok('lat:100|h|@0.5'));
  const s = byName(agg.flush(1, 10));
  assert.is(s['lat.min'], 1);
  assert.is(s['lat.max'], 100);
  assert.is(s['lat.count'], 11);
  assert.is(s['lat.per_second'], 1.2, 'ten values plus one sampled at 0.5 count 12 in 10 s');
  assert.is(s['lat.sum'], 155);
  assert.is(s['lat.sum_squares'], 385 + 10000);
  assert.is(s['lat.median'], 6);
  assert.is(s['lat.percentile_90'], 10);
  assert.ok(Math.abs(s['lat.mean']! - 155 / 11) < 1e-9);
  assert.equal(
    Object.keys(s).sort(),
    [
      'count',
      'max',
      'mean',
      'median',
      'min',
      'per_second',
      'percentile_90',
      'stddev',
      'sum',
      'sum_squares',
    ].map((k) => `lat.${k}`),
  );
  const even = timerStats([4, 1, 3, 2], 4, 1);
  assert.is(even.median, 2.5);
  assert.is(even.stddev, Math.sqrt(1.25));
  assert.is(timerStats([7], 1, 1).percentile_90, 7);
});

test('gauges: last value wins, +/- change it, only touched gauges are reported', () => {
  const agg = new StatsdAggregator();
  agg.add(ok('temp:10|g'));
  agg.add(ok('temp:+5|g'));
  agg.add(ok('temp:-2|g'));
  assert.equal(byName(agg.flush(1, 10)), { 'temp.value': 13 });
  assert.equal(agg.flush(2, 10), [], 'not reported when unchanged');
  agg.add(ok('temp:+1|g'));
  assert.equal(byName(agg.flush(3, 10)), { 'temp.value': 14 }, 'relative change survives a flush');
  agg.add(ok('new:-3|g'));
  assert.equal(
    byName(agg.flush(4, 10)),
    { 'new.value': -3 },
    'a relative change of an unknown gauge starts at 0',
  );
  for (let i = 0; i < GAUGE_IDLE_FLUSHES; i++) agg.flush(5 + i, 10);
  agg.add(ok('temp:+1|g'));
  assert.equal(byName(agg.flush(100, 10)), { 'temp.value': 1 }, 'a long-idle gauge is forgotten');
});

test('sets: number of distinct members', () => {
  const agg = new StatsdAggregator();
  for (const u of ['a', 'b', 'a', 'c', 'b']) agg.add(ok(`users:${u}|s`));
  assert.equal(byName(agg.flush(1, 10)), { 'users.value': 3 });
});

test('tags keep series apart (whatever their order) and travel with the points', () => {
  const agg = new StatsdAggregator();
  agg.add(ok('req:1|c|#env:prod,dc:a'));
  agg.add(ok('req:1|c|#dc:a,env:prod'));
  agg.add(ok('req:1|c|#env:dev'));
  agg.add(ok('req:1|c'));
  const values = agg.flush(1, 1).filter((p) => p.name === 'req.value');
  assert.is(values.length, 3);
  const prod = values.find((p) => p.tags.some((t) => t.value === 'prod'))!;
  assert.is(prod.value, 2);
  assert.equal(prod.tags, [
    { name: 'env', value: 'prod' },
    { name: 'dc', value: 'a' },
  ]);
});

test('the number of series per interval is bounded', () => {
  const agg = new StatsdAggregator();
  for (let i = 0; i < MAX_SERIES + 5; i++) agg.add(ok(`m${i}:1|c`));
  assert.is(agg.dropped, 5);
  assert.is(agg.flush(1, 1).length, MAX_SERIES * 2);
  agg.add(ok('after:1|c'));
  assert.is(agg.dropped, 5, 'room again after a flush');
  agg.flush(2, 1);
  for (let i = 0; i < MAX_VALUES_PER_SERIES + 3; i++) {
    agg.add(ok(`t:${i}|ms`));
    agg.add(ok(`u:${i}|s`));
  }
  agg.add(ok('u:0|s'));
  assert.is(agg.dropped, 5 + 6, 'timer values and set members are bounded too');
  const s = byName(agg.flush(3, 1));
  assert.is(s['t.count'], MAX_VALUES_PER_SERIES);
  assert.is(s['u.value'], MAX_VALUES_PER_SERIES);
});

test.run();
