import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  substituteLegacyTokens,
  substituteLegacyTokensDeep,
  unmatchedOutput,
} from '../../agent/legacy/checks/tokens.ts';
import { legacySplay } from '../../agent/legacy/checks/splay.ts';
import { classicCheck, mergeLocal, selectClassicHook } from '../../agent/legacy/checks/definition.ts';
import { planLegacy, SAFE_MODE_OUTPUT } from '../../agent/checks/legacy.ts';
import { standaloneSchedule } from '../../agent/legacy/standalone.ts';
import { legacySubdued } from '../../agent/legacy/checks/subdue.ts';
import { CheckSubscriptions } from '../../gateway/agents/subscriptions.ts';
import { roundRobinOnly } from '../../proto/legacy/subscriptions.ts';
import { requestSubjects } from '../../actors/schedule/requests.ts';
import { subjects } from '../../proto/names.ts';
import { createLogger } from '../../lib/log.ts';
import type { StoredCheck } from '../../actors/schedule/messages.ts';
import type { CheckRequest } from '../../proto/schemas/check-request.ts';

// The reference's vector: `\255` is a byte that is not UTF-8, decoded here as a byte source would be.
const VECTOR_INPUT = Buffer.concat([
  Buffer.from(
    ':::nested.attribute|default::: :::missing|default::: :::missing|::: :::missing::: ' +
      ':::nested.attribute:::::::nested.attribute::: :::empty|localhost::: :::empty.hash|localhost:8080::: :::foo',
  ),
  Buffer.from([0xad]),
  Buffer.from('|default::: :::empty|default|with_pipe:::'),
]).toString('utf8');

test('tokens: the reference vector (output and unmatched list)', () => {
  const r = substituteLegacyTokens(VECTOR_INPUT, { nested: { attribute: true }, empty: {}, foo: true });
  assert.is(r.value, 'true default   true:true localhost localhost:8080 true default|with_pipe');
  assert.equal(r.unmatched, ['missing']);
});

test('tokens: objects and arrays recursed, numbers left alone, unmatched listed once in order', () => {
  const client = { name: 'web-01', disk: { warning: 80 }, tags: ['a', 'b'], off: false };
  const r = substituteLegacyTokensDeep(
    {
      command:
        'check-disk -w :::disk.warning::: -c :::disk.critical|95::: :::nonexistent::: :::nonexistent:::',
      interval: 10,
      args: [':::name:::', ':::empty.hash:::', 3],
      nested: { x: ':::off::: :::tags:::' },
      flag: true,
    },
    client,
  );
  assert.equal(r.value, {
    command: 'check-disk -w 80 -c 95  ',
    interval: 10,
    args: ['web-01', '', 3],
    nested: { x: 'false ["a", "b"]' },
    flag: true,
  });
  assert.equal(r.unmatched, ['nonexistent', 'empty.hash']);
  assert.is(unmatchedOutput(r.unmatched), 'Unmatched client token(s): nonexistent, empty.hash');
});

test('splay: the reference vectors for a client key and a server key', () => {
  const now = 1414213569032;
  assert.is(legacySplay('i-424242:test', 60, now), 3.321);
  assert.is(legacySplay('i-424242:test', 3600, now), 783.321);
  assert.is(legacySplay('test', 60, now), 17.601);
  assert.is(legacySplay('test', 3600, now), 3497.601);
  for (let t = now; t < now + 5000; t += 777) {
    const s = legacySplay('x:y', 2, t);
    assert.ok(s >= 0 && s < 2, `in [0, interval): ${s}`);
  }
});

const request = (config: Record<string, unknown>): CheckRequest => ({
  config: { metadata: { name: 'disk', namespace: 'default' }, command: 'from-request', ...config } as never,
  issued: 1700000000,
});

test('a local definition is merged over the request, in our names; its hooks replace check_hooks', () => {
  const { config, hooks } = mergeLocal(
    request({ interval: 60, subscriptions: ['linux'], check_hooks: [{ type: 'critical', hooks: ['h'] }] })
      .config,
    {
      command: 'local :::name:::',
      subscribers: ['client:web-01', 'roundrobin:web'],
      handler: 'mail',
      handlers: ['pager', 'mail'],
      source: 'router-1',
      ttl: 2,
      timeout: 5,
      team: 'ops',
      hooks: { critical: { command: 'ps aux' }, broken: 'x' },
    },
  );
  assert.equal(config, {
    metadata: { name: 'disk', namespace: 'default' },
    command: 'local :::name:::',
    interval: 60,
    subscriptions: ['entity:web-01', 'roundrobin:web'],
    handlers: ['mail', 'pager'],
    proxy_entity_name: 'router-1',
    ttl: 5,
    timeout: 5,
    team: 'ops',
  });
  assert.equal(hooks, { critical: { command: 'ps aux' } });
  assert.is(
    mergeLocal(request({ proxy_entity_name: 'x' }).config, { source: '' }).config.proxy_entity_name,
    undefined,
  );
});

test('plan: safe mode refuses an undefined check; a defined one runs merged; proxy requests are not merged', () => {
  const mode = { client: () => ({}), checks: { disk: { command: 'local' } }, safeMode: true };
  const refused = planLegacy(request({}), { ...mode, checks: {} });
  assert.equal(refused, { run: false, config: request({}).config, output: SAFE_MODE_OUTPUT });
  assert.is(SAFE_MODE_OUTPUT, 'Check is not locally defined (safe mode)');
  const merged = planLegacy(request({}), mode);
  assert.ok(merged.run && merged.config.command === 'local');
  const proxy = planLegacy(request({ proxy_requests: { entity_attributes: ['true'] } }), mode);
  assert.ok(proxy.run && proxy.config.command === 'from-request');
  const open = planLegacy(request({}), { ...mode, checks: {}, safeMode: false });
  assert.ok(open.run && open.config.command === 'from-request');
  // Not an own property: a check named like an Object method is not "defined".
  assert.is(
    planLegacy(
      { ...request({}), config: { ...request({}).config, metadata: { name: 'toString' } } },
      { ...mode, checks: {} },
    ).run,
    false,
  );
});

test('legacy hooks: "<status>", then the severity name, then non-zero', () => {
  const hooks = {
    '2': { command: 'two' },
    critical: { command: 'crit' },
    warning: { command: 'warn' },
    'non-zero': { command: 'nz' },
    ok: { command: 'ok' },
  };
  assert.equal(selectClassicHook(hooks, 2), { key: '2', hook: { command: 'two' } });
  assert.equal(selectClassicHook(hooks, 1)?.key, 'warning');
  assert.equal(selectClassicHook(hooks, 0)?.key, 'ok');
  assert.equal(selectClassicHook(hooks, 3)?.key, 'non-zero');
  assert.equal(selectClassicHook(hooks, 127)?.key, 'non-zero');
  assert.is(selectClassicHook({ 'non-zero': { command: 'nz' } }, 0), undefined);
  assert.equal(selectClassicHook({ unknown: { command: 'u' } }, 3)?.key, 'unknown');
});

test('stdin check: legacy names, name and issued, no metadata', () => {
  const c = classicCheck(
    request({ subscriptions: ['web'], proxy_entity_name: 'r1', interval: 5 }).config,
    1700000001,
    { ok: { command: 'x' } },
  );
  assert.equal(c, {
    name: 'disk',
    command: 'from-request',
    interval: 5,
    subscribers: ['web'],
    source: 'r1',
    hooks: { ok: { command: 'x' } },
    issued: 1700000001,
  });
});

test('standalone: standalone, published, with an integer interval or a cron', () => {
  assert.equal(standaloneSchedule({ standalone: true, interval: 10 }), { kind: 'interval', seconds: 10 });
  assert.is(standaloneSchedule({ standalone: true, interval: 10, publish: false }), undefined);
  assert.is(standaloneSchedule({ interval: 10 }), undefined);
  assert.is(standaloneSchedule({ standalone: true, interval: 1.5 }), undefined);
  assert.is(standaloneSchedule({ standalone: true }), undefined);
  assert.is(standaloneSchedule({ standalone: true, cron: '*/5 * * * *' })?.kind, 'cron');
});

test('agent side: roundrobin:x and direct:x join only the round-robin group of x; plain names both subjects', () => {
  assert.is(roundRobinOnly('roundrobin:web'), 'web');
  assert.is(roundRobinOnly('direct:db'), 'db');
  assert.is(roundRobinOnly('web'), undefined);
  assert.is(roundRobinOnly('entity:web'), undefined);
  const subs: Array<{ subject: string; queue?: string }> = [];
  const nats = {
    subscribe: (subject: string, _cb: unknown, o?: { queue?: string }) => {
      subs.push({ subject, ...(o?.queue ? { queue: o.queue } : {}) });
      return { unsubscribe() {} };
    },
  };
  const s = new CheckSubscriptions(
    {
      nats: nats as never,
      namespace: 'default',
      agentName: 'c1',
      deliver: () => {},
      log: () => createLogger('error', {}, () => {}),
    },
    ['roundrobin:web', 'linux'],
  );
  assert.equal(s.names, ['roundrobin:web', 'linux', 'entity:c1']);
  assert.equal(subs, [
    { subject: subjects.roundRobin('default', 'web'), queue: subjects.roundRobinQueue },
    { subject: subjects.subscription('default', 'linux') },
    { subject: subjects.roundRobin('default', 'linux'), queue: subjects.roundRobinQueue },
    { subject: subjects.subscription('default', 'entity:c1') },
    { subject: subjects.roundRobin('default', 'entity:c1'), queue: subjects.roundRobinQueue },
  ]);
  s.close();
});

test('scheduler side: roundrobin:x goes to the round-robin group of x whatever round_robin says', () => {
  const check = (o: Partial<StoredCheck>) => ({ metadata: { name: 'c' }, command: 'x', ...o }) as StoredCheck;
  assert.equal(requestSubjects('default', check({ subscriptions: ['roundrobin:web', 'linux'] })), [
    subjects.roundRobin('default', 'web'),
    subjects.subscription('default', 'linux'),
  ]);
  assert.equal(
    requestSubjects('default', check({ subscriptions: ['roundrobin:web', 'web'], round_robin: true })),
    [subjects.roundRobin('default', 'web')],
  );
  assert.equal(requestSubjects('default', check({ subscriptions: ['linux'] }), ['direct:db']), [
    subjects.roundRobin('default', 'db'),
  ]);
});

test('subdue: windows of all days or of the weekday, local time, ends inclusive, across midnight', () => {
  // Monday 1 January 2024, local time.
  const at = (h: number, m: number, sec = 0) => new Date(2024, 0, 1, h, m, sec);
  const night = { days: { all: [{ begin: '10:00 PM', end: '6:00 AM' }] } };
  assert.ok(legacySubdued(night, at(23, 0)));
  assert.ok(legacySubdued(night, at(2, 0)));
  assert.ok(legacySubdued(night, at(5, 59, 59)));
  assert.ok(legacySubdued(night, at(22, 0)), 'the begin too');
  assert.not.ok(
    legacySubdued(night, at(6, 0)),
    'across midnight, the end second itself is out (as the legacy client)',
  );
  assert.not.ok(legacySubdued(night, at(12, 0)));
  const monday = {
    days: { monday: [{ begin: '9:00 AM', end: '5:00 PM' }], tuesday: [{ begin: '0:00', end: '23:59' }] },
  };
  assert.ok(legacySubdued(monday, at(10, 0)));
  assert.ok(legacySubdued(monday, at(17, 0)), 'the end is inclusive');
  assert.not.ok(legacySubdued(monday, at(17, 0, 1)));
  assert.not.ok(legacySubdued(monday, new Date(2024, 0, 3, 10, 0)), 'Wednesday');
  assert.not.ok(legacySubdued(undefined, at(10, 0)));
  assert.not.ok(legacySubdued({ days: { all: [{ begin: 'soon', end: 'later' }] } }, at(10, 0)));
});

test.run();
