import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { silencedBy, toDeleteOnResolve } from '../../actors/entity/silencing.ts';
import type { SilencedEntry } from '../../proto/schemas/resources/silenced.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import { silencedExpire, silencedResource } from '../../gateway/api/resources.ts';
import { ApiError } from '../../gateway/api/errors.ts';

const NOW = 1_700_000_000;
const entry = (subscription: string, check: string, extra: Partial<SilencedEntry> = {}): SilencedEntry =>
  ({
    metadata: { name: `${subscription || '*'}:${check || '*'}`, namespace: 'default' },
    subscription,
    check,
    begin: NOW - 10,
    expire: -1,
    expire_at: 0,
    ...extra,
  }) as SilencedEntry;

const entity = {
  metadata: { name: 'web1', namespace: 'default' },
  entity_class: 'agent',
  subscriptions: ['linux', 'web', 'entity:web1'],
} as unknown as Entity;
const event = (check: Record<string, unknown>): Event =>
  ({
    metadata: { namespace: 'default' },
    entity,
    check: { metadata: { name: 'disk', namespace: 'default' }, subscriptions: ['linux', 'db'], ...check },
  }) as unknown as Event;
const agentEvent = event({});
const proxyEvent = event({ proxy_entity_name: 'web1' });

const names = (entries: SilencedEntry[], ev: Event = agentEvent) => silencedBy(entries, ev, entity, NOW);

test('subscription:check matches when both are on the entity and check', () => {
  assert.equal(names([entry('linux', 'disk')]), ['linux:disk']);
  assert.equal(names([entry('linux', 'cpu')]), []);
  assert.equal(names([entry('windows', 'disk')]), []);
});

test('*:check and check-only entries match the check anywhere', () => {
  assert.equal(names([entry('', 'disk'), entry('*', 'disk'), entry('', 'cpu')]), ['*:disk', '*:disk']);
});

test('sub:* and subscription-only entries match every check of the subscription', () => {
  assert.equal(names([entry('linux', ''), entry('linux', '*'), entry('mac', '')]), ['linux:*', 'linux:*']);
});

test('entity:<name> matches the entity whatever the check subscriptions', () => {
  assert.equal(
    names([
      entry('entity:web1', ''),
      entry('entity:web1', 'disk'),
      entry('entity:web2', ''),
      entry('entity:web', ''),
    ]),
    ['entity:web1:*', 'entity:web1:disk'],
  );
  const bare = { ...entity, subscriptions: [] } as unknown as Entity;
  assert.equal(silencedBy([entry('entity:web1', '')], agentEvent, bare, NOW), ['entity:web1:*']);
});

test('a begin in the future silences nothing yet', () => {
  assert.equal(names([entry('linux', 'disk', { begin: NOW + 5 })]), []);
  assert.equal(names([entry('linux', 'disk', { begin: NOW })]), ['linux:disk']);
  assert.equal(names([entry('linux', 'disk', { begin: undefined })]), ['linux:disk']);
});

test('an entry past expire_at silences nothing (a late lease changes nothing)', () => {
  assert.equal(names([entry('linux', 'disk', { expire_at: NOW })]), []);
  assert.equal(names([entry('linux', 'disk', { expire_at: NOW - 1 })]), []);
  assert.equal(names([entry('linux', 'disk', { expire_at: NOW + 1 })]), ['linux:disk']);
  assert.equal(names([entry('linux', 'disk', { expire_at: 0 })]), ['linux:disk']);
});

test('agent events use entity ∩ check subscriptions', () => {
  // web is on the entity only, db on the check only: neither is in the intersection.
  assert.equal(names([entry('web', 'disk'), entry('db', 'disk'), entry('linux', 'disk')]), ['linux:disk']);
});

test('proxy events use the entity subscriptions', () => {
  assert.equal(names([entry('web', 'disk'), entry('db', 'disk'), entry('linux', 'disk')], proxyEvent), [
    'web:disk',
    'linux:disk',
  ]);
});

test('a check subscription not on the entity never matches', () => {
  const ev = event({ subscriptions: ['db'] });
  assert.equal(names([entry('db', ''), entry('db', 'disk')], ev), []);
});

test('an event without a check only matches wildcard-check entries', () => {
  const ev = { metadata: { namespace: 'default' }, entity } as unknown as Event;
  assert.equal(
    silencedBy([entry('entity:web1', ''), entry('linux', 'disk'), entry('', 'keepalive')], ev, entity, NOW),
    ['entity:web1:*'],
  );
});

test('expire_on_resolve selects only the matched entries that ask for it', () => {
  const entries = [
    entry('linux', 'disk', { expire_on_resolve: true }),
    entry('', 'disk'),
    entry('web', '', { expire_on_resolve: true }),
  ];
  const matched = names(entries);
  assert.equal(matched, ['linux:disk', '*:disk']);
  assert.equal(toDeleteOnResolve(entries, matched), ['linux:disk']);
  assert.equal(toDeleteOnResolve(entries, []), []);
});

const refused = (fn: () => unknown, what: string) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, what);
    assert.match((err as Error).message, /expire/);
    return;
  }
  assert.unreachable(`${what}: not refused`);
};

test('expiry flags: default when absent, a cap refused with 400, "never" capped', () => {
  assert.is(silencedExpire(undefined, undefined), -1);
  assert.is(silencedExpire(30, undefined), 30);
  assert.is(silencedExpire(undefined, { defaultSec: 60, maxSec: 0 }), 60);
  assert.is(silencedExpire(10, { defaultSec: 60, maxSec: 0 }), 10);
  assert.is(silencedExpire(0, { defaultSec: 60, maxSec: 0 }), 0, 'an explicit 0 is kept');
  assert.is(silencedExpire(100, { defaultSec: 0, maxSec: 100 }), 100);
  assert.is(silencedExpire(undefined, { defaultSec: 0, maxSec: 100 }), 100);
  assert.is(silencedExpire(undefined, { defaultSec: 50, maxSec: 100 }), 50);
  refused(() => silencedExpire(101, { defaultSec: 0, maxSec: 100 }), 'over the cap');
  refused(() => silencedExpire(-1, { defaultSec: 0, maxSec: 100 }), 'never, with a cap');
  refused(() => silencedExpire(undefined, { defaultSec: 200, maxSec: 100 }), 'default over the cap');
});

test('stored form and lease: expire counts from begin, at least 1 s, none without expire', () => {
  const subject = { username: 'admin', groups: [] } as any;
  const now = NOW * 1000 + 400;
  const stored = silencedResource.toStored!(
    { metadata: { namespace: 'default' }, subscription: 'linux', begin: NOW + 10, expire: 5 },
    { subject, now },
  );
  assert.is(stored.expire_at, NOW + 15);
  assert.is(silencedResource.leaseTtl!(stored, now), 15);
  const past = silencedResource.toStored!(
    { metadata: {}, check: 'disk', begin: NOW - 100, expire: 5 },
    { subject, now },
  );
  assert.is(silencedResource.leaseTtl!(past, now), 1);
  const forever = silencedResource.toStored!({ metadata: {}, check: 'disk' }, { subject, now });
  assert.is(forever.expire_at, 0);
  assert.is(silencedResource.leaseTtl!(forever, now), undefined);
  const dflt = silencedResource.toStored!(
    { metadata: {}, check: 'disk' },
    { subject, now, silencedExpiry: { defaultSec: 60, maxSec: 0 } },
  );
  assert.is(dflt.expire, 60);
  assert.is(dflt.expire_at, NOW + 60);
});

test.run();
