import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { aggregatesOf, requestSubscription, RequestRules, toLegacyCheck } from '../../proto/legacy/checks.ts';
import {
  aggregateChecks,
  aggregateClients,
  aggregateIndex,
  aggregateResults,
  aggregateSummary,
  severityOf,
  type MemberSource,
} from '../../proto/legacy/aggregates.ts';
import { ClearRules, SilenceRules, toLegacySilenced } from '../../proto/legacy/silenced.ts';
import { CheckConfig } from '../../proto/schemas/resources/checks.ts';

// The pure views of the legacy API's checks, aggregates and silenced entries (proto/legacy).

test('a check configuration shown as a legacy check: name, subscribers the legacy way, legacy keys', () => {
  const shown = toLegacyCheck({
    metadata: { name: 'disk', namespace: 'default' },
    command: 'check-disk',
    subscriptions: ['linux', 'entity:web-01', 'linux'],
    interval: 60,
    handlers: ['mail'],
    timeout: 10,
    ttl: 120,
    publish: true,
    stdin: false,
    low_flap_threshold: 0,
    proxy_entity_name: 'router',
    aggregate: 'disks',
    aggregates: ['all'],
    runtime_assets: ['x'],
  });
  assert.equal(shown, {
    name: 'disk',
    command: 'check-disk',
    subscribers: ['linux', 'client:web-01'],
    interval: 60,
    handlers: ['mail'],
    timeout: 10,
    ttl: 120,
    publish: true,
    stdin: false,
    aggregate: 'disks',
    aggregates: ['all'],
    source: 'router',
  });
});

test('a round-robin check: each subscriber shown as roundrobin:<sub>; cron instead of interval', () => {
  const shown = toLegacyCheck({
    metadata: { name: 'x' },
    command: 'true',
    subscriptions: ['web', 'roundrobin:db'],
    round_robin: true,
    cron: '* * * * *',
    interval: 0,
  });
  assert.equal(shown.subscribers, ['roundrobin:web', 'roundrobin:db']);
  assert.is(shown.cron, '* * * * *');
  assert.not.ok('interval' in shown);
});

test('aggregatesOf: true names the check, a string names itself, aggregates add, duplicates once', () => {
  assert.equal(aggregatesOf({ aggregate: true }, 'disk'), ['disk']);
  assert.equal(aggregatesOf({ aggregate: 'web', aggregates: ['web', 'all'] }, 'disk'), ['web', 'all']);
  assert.equal(aggregatesOf({ aggregate: false }, 'disk'), []);
  assert.equal(aggregatesOf({ aggregates: [1, 'a'] }, 'disk'), ['a']);
});

test('CheckConfig takes aggregate (boolean or name) and aggregates (names), refuses other names', () => {
  const base = { metadata: { name: 'c' }, command: 'true', interval: 10 };
  assert.ok(v.safeParse(CheckConfig, { ...base, aggregate: true, aggregates: ['a:b|c.d-e'] }).success);
  assert.ok(v.safeParse(CheckConfig, { ...base, aggregate: 'web_1' }).success);
  assert.not.ok(v.safeParse(CheckConfig, { ...base, aggregate: 'a b' }).success);
  assert.not.ok(v.safeParse(CheckConfig, { ...base, aggregate: 1 }).success);
  assert.not.ok(v.safeParse(CheckConfig, { ...base, aggregates: 'a' }).success);
  assert.not.ok(v.safeParse(CheckConfig, { ...base, aggregates: ['a/b'] }).success);
});

test('POST /request rules and subscribers: client: → entity:, roundrobin: → the subscription', () => {
  assert.ok(v.safeParse(RequestRules, { check: 'x', subscribers: ['a'], reason: 'r', creator: 'c' }).success);
  assert.not.ok(v.safeParse(RequestRules, {}).success);
  assert.not.ok(v.safeParse(RequestRules, { check: 1 }).success);
  assert.not.ok(v.safeParse(RequestRules, { check: 'x', subscribers: 'a' }).success);
  assert.not.ok(v.safeParse(RequestRules, { check: 'x', reason: 1 }).success);
  assert.is(requestSubscription('client:web-01'), 'entity:web-01');
  assert.is(requestSubscription('roundrobin:db'), 'db');
  assert.is(requestSubscription('linux'), 'linux');
});

const ev = (entity: string, check: string, result: MemberSource['result']): MemberSource => ({
  entity,
  check,
  result,
});

test('aggregateIndex: own names first, else the definition; tombstones cut results executed up to them', () => {
  const index = aggregateIndex(
    [
      ev('a', 'disk', { aggregate: true, status: 0, output: 'ok', executed: 100 }),
      ev('b', 'disk', { aggregate: true, status: 2, output: 'full', executed: 200 }),
      ev('a', 'cpu', { status: 1, output: 'hot', executed: 100 }),
      ev('a', 'mem', { aggregates: ['all'], status: 0, executed: 100 }),
      ev('a', 'other', { status: 0, executed: 100 }),
    ],
    new Map([
      ['cpu', ['all']],
      ['mem', ['never']],
    ]),
    new Map([['disk', 150]]),
  );
  assert.equal([...index.keys()].sort(), ['all', 'disk']);
  assert.equal(
    index.get('disk')!.map((m) => m.client),
    ['b'],
  );
  assert.equal(
    index
      .get('all')!
      .map((m) => `${m.client}/${m.check}`)
      .sort(),
    ['a/cpu', 'a/mem'],
  );
});

test('aggregate summary, clients, checks and results by severity', () => {
  const members = [
    { client: 'a', check: 'disk', status: 0, output: 'ok', executed: 1000 },
    { client: 'b', check: 'disk', status: 2, output: 'full', executed: 1000 },
    { client: 'c', check: 'disk', status: 2, output: 'full', executed: 10 },
    { client: 'a', check: 'cpu', status: 1, output: 'hot', executed: 1000 },
    { client: 'a', check: 'mem', status: 7, output: '?', executed: 1000 },
  ];
  assert.equal(aggregateSummary(members, 1010), {
    clients: 3,
    checks: 3,
    results: { ok: 1, warning: 1, critical: 2, unknown: 1, total: 5, stale: 0 },
  });
  assert.equal(aggregateSummary(members, 1010, 60).results, {
    ok: 1,
    warning: 1,
    critical: 1,
    unknown: 1,
    total: 4,
    stale: 1,
  });
  assert.equal(aggregateClients(members), [
    { name: 'a', checks: ['disk', 'cpu', 'mem'] },
    { name: 'b', checks: ['disk'] },
    { name: 'c', checks: ['disk'] },
  ]);
  assert.equal(aggregateChecks(members), [
    { name: 'disk', clients: ['a', 'b', 'c'] },
    { name: 'cpu', clients: ['a'] },
    { name: 'mem', clients: ['a'] },
  ]);
  assert.equal(aggregateResults(members, 'critical'), [
    { check: 'disk', summary: [{ output: 'full', total: 2, clients: ['b', 'c'] }] },
  ]);
  assert.equal(aggregateResults(members, 'unknown'), [
    { check: 'mem', summary: [{ output: '?', total: 1, clients: ['a'] }] },
  ]);
  assert.equal(aggregateResults(members, 'ok').length, 1);
  assert.is(severityOf(3), 'unknown');
  assert.is(severityOf(-1), 'unknown');
});

test('silenced rules: patterns, types, one of subscription/check, "*" refused', () => {
  const ok = (b: unknown) => v.safeParse(SilenceRules, b).success;
  assert.ok(ok({ subscription: 'client:web-01' }));
  assert.ok(ok({ check: 'disk', begin: 1, expire: 60, reason: 'r', creator: 'c', expire_on_resolve: true }));
  assert.not.ok(ok({}));
  assert.not.ok(ok({ subscription: '*' }));
  assert.not.ok(ok({ check: 'a:b' }));
  assert.not.ok(ok({ check: 'disk', expire: 1.5 }));
  assert.not.ok(ok({ check: 'disk', expire: '60' }));
  assert.not.ok(ok({ check: 'disk', expire_on_resolve: 'yes' }));
  assert.not.ok(ok({ check: 'disk', reason: 1 }));
  assert.ok(v.safeParse(ClearRules, {}).success);
  assert.not.ok(v.safeParse(ClearRules, { id: 1 }).success);
  assert.not.ok(v.safeParse(ClearRules, { subscription: 'a b' }).success);
});

test('a silenced entry shown the legacy way: id and subscription client:, expire = seconds left or -1', () => {
  const stored = {
    metadata: { name: 'entity:web-01:disk', namespace: 'default' },
    subscription: 'entity:web-01',
    check: 'disk',
    begin: 1000,
    expire: 60,
    expire_at: 1060,
    creator: 'me',
  };
  assert.equal(toLegacySilenced(stored, 1010.5), {
    id: 'client:web-01:disk',
    subscription: 'client:web-01',
    check: 'disk',
    reason: null,
    creator: 'me',
    begin: 1000,
    expire_on_resolve: false,
    timestamp: 1000,
    expire: 50,
  });
  const forever = toLegacySilenced(
    { metadata: { name: '*:disk' }, check: 'disk', expire: -1, expire_at: 0 },
    5,
  );
  assert.is(forever.expire, -1);
  assert.is(forever.subscription, null);
  assert.is(forever.id, '*:disk');
});

test.run();
