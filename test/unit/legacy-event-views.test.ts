import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createLogger } from '../../lib/log.ts';
import { mergeCheck } from '../../actors/entity/check-state.ts';
import { mutate } from '../../actors/pipeline/mutators/index.ts';
import type { ExecContext } from '../../actors/pipeline/types.ts';
import {
  LegacyClientDefinition,
  clientToEntity,
  toLegacyClient,
  withClientDefaults,
} from '../../proto/legacy/clients.ts';
import {
  isLegacyEvent,
  lastStateChange,
  legacyAction,
  toLegacyEvent,
  toLegacyHistory,
  toLegacyResult,
} from '../../proto/legacy/events.ts';
import { Entity } from '../../proto/schemas/entity.ts';
import type { Check, Event } from '../../proto/schemas/event.ts';
import { VERSION } from '../../proto/version.ts';

// The legacy views of our stored events and entities (proto/legacy), the legacy mutator, and how a
// forced resolution ends flapping.

const hist = (statuses: number[]) => statuses.map((status, i) => ({ status, executed: 1000 + i }));
const entity = {
  metadata: { name: 'web-01', namespace: 'default' },
  entity_class: 'agent',
  subscriptions: ['linux', 'entity:web-01'],
  last_seen: 1700000000,
  monitor_agent_version: '1.2.3',
  system: {
    network: {
      interfaces: [
        { name: 'lo', addresses: ['127.0.0.1/8', '::1/128'] },
        { name: 'eth0', addresses: ['fe80::1/64', '10.0.0.5/24'] },
      ],
    },
  },
} as Entity;
const check = {
  metadata: { name: 'disk', namespace: 'default', labels: { a: 'b' } },
  command: 'check-disk',
  subscriptions: ['linux', 'entity:web-01'],
  interval: 60,
  handlers: ['slack'],
  output: 'DISK CRITICAL',
  status: 2,
  issued: 1700000000,
  executed: 1700000001,
  duration: 0.5,
  history: hist([0, 0, 2, 2]),
  occurrences: 2,
  occurrences_watermark: 2,
  total_state_change: 0,
  state: 'failing',
  last_ok: 1001,
  is_silenced: true,
  silenced: ['entity:web-01:*', 'linux:disk'],
  environment: 'prod',
  proxy_entity_name: '',
  stdin: null,
} as unknown as Check;
const event: Event = { id: 'e-1', timestamp: 1700000002, entity, check };

test('the legacy event: client view, check with string history, event-level fields, silenced ids mapped', () => {
  const e = toLegacyEvent(event) as Record<string, any>;
  assert.is(e.id, 'e-1');
  assert.is(e.client.name, 'web-01');
  assert.is(e.client.address, '10.0.0.5');
  assert.equal(e.client.subscriptions, ['linux', 'client:web-01']);
  assert.equal(e.check, {
    name: 'disk',
    command: 'check-disk',
    interval: 60,
    handlers: ['slack'],
    output: 'DISK CRITICAL',
    status: 2,
    issued: 1700000000,
    executed: 1700000001,
    duration: 0.5,
    total_state_change: 0,
    environment: 'prod',
    proxy_entity_name: '',
    subscribers: ['linux', 'client:web-01'],
    type: 'standard',
    history: ['0', '0', '2', '2'],
  });
  assert.is(e.occurrences, 2);
  assert.is(e.occurrences_watermark, 2);
  assert.is(e.last_ok, 1001);
  assert.is(e.action, 'create');
  assert.is(e.timestamp, 1700000002);
  assert.is(e.last_state_change, 1002);
  assert.is(e.silenced, true);
  assert.equal(e.silenced_by, ['client:web-01:*', 'linux:disk']);
});

test('action: flapping, create, resolve; a metric check; no last_ok is null; no change is null', () => {
  assert.is(legacyAction({ ...check, state: 'flapping', status: 0 }), 'flapping');
  assert.is(legacyAction({ ...check, state: 'failing', status: 1 }), 'create');
  assert.is(legacyAction({ ...check, state: 'passing', status: 0 }), 'resolve');
  const metric = toLegacyEvent({
    ...event,
    check: { ...check, output_metric_format: 'graphite_plaintext', last_ok: 0 },
  });
  assert.is((metric.check as any).type, 'metric');
  assert.is(metric.last_ok, null);
  assert.is(lastStateChange({ ...check, history: hist([1, 1, 1]) }), null);
  assert.is(lastStateChange({ ...check, history: hist([0, 1, 0, 0]) }), 1002);
});

test('which events the legacy API lists: failing or flapping only', () => {
  assert.ok(isLegacyEvent(event));
  assert.not.ok(isLegacyEvent({ ...event, check: { ...check, status: 0, state: 'passing' } }));
  assert.ok(isLegacyEvent({ ...event, check: { ...check, status: 0, state: 'flapping' } }));
});

test('result and history views: integer history', () => {
  const r = toLegacyResult(event);
  assert.is(r.client, 'web-01');
  assert.equal(r.check.history, [0, 0, 2, 2]);
  const h = toLegacyHistory(event) as Record<string, any>;
  assert.equal(h.check, 'disk');
  assert.equal(h.history, [0, 0, 2, 2]);
  assert.is(h.last_execution, 1700000001);
  assert.is(h.last_status, 2);
  assert.is(h.last_result.history, undefined);
  assert.is(h.last_result.output, 'DISK CRITICAL');
});

test('an agent entity as a client: keepalives true, its version, the first non-loopback IPv4', () => {
  assert.equal(toLegacyClient(entity), {
    name: 'web-01',
    address: '10.0.0.5',
    subscriptions: ['linux', 'client:web-01'],
    timestamp: 1700000000,
    version: '1.2.3',
    keepalives: true,
  });
});

test('a proxy entity nobody defined: type proxy, keepalives false, our version, address unknown', () => {
  const c = toLegacyClient({ metadata: { name: 'sw-1' }, entity_class: 'proxy' });
  assert.equal(c, {
    type: 'proxy',
    name: 'sw-1',
    address: 'unknown',
    subscriptions: [],
    timestamp: 0,
    version: VERSION,
    keepalives: false,
  });
});

const validClient = (body: Record<string, unknown>) =>
  v.safeParse(LegacyClientDefinition, withClientDefaults(body, 1700000000));

test('client definitions: the reference rules', () => {
  const good = { name: 'db-01', address: '10.0.0.9' };
  assert.ok(validClient(good).success);
  assert.not.ok(validClient({ address: 'x' }).success, 'no name');
  assert.not.ok(validClient({ ...good, name: 'db 01' }).success);
  assert.not.ok(validClient({ ...good, name: 'db-01\n' }).success, 'a newline in the name');
  assert.not.ok(validClient({ name: 'db-01' }).success, 'address is required');
  assert.not.ok(validClient({ ...good, address: 1 }).success);
  assert.not.ok(validClient({ ...good, subscriptions: 'linux' }).success);
  assert.not.ok(validClient({ ...good, subscriptions: ['linux', ''] }).success);
  assert.not.ok(validClient({ ...good, keepalives: 'no' }).success);
  assert.not.ok(validClient({ ...good, safe_mode: 1 }).success);
  assert.not.ok(validClient({ ...good, socket: { port: '3030' } }).success);
  assert.not.ok(validClient({ ...good, keepalive: { thresholds: { warning: '1' } } }).success);
  assert.not.ok(validClient({ ...good, redact: 'password' }).success);
  assert.not.ok(validClient({ ...good, signature: 5 }).success);
  assert.not.ok(validClient({ ...good, deregistration: { handler: 3 } }).success);
  assert.ok(
    validClient({
      ...good,
      keepalive: { thresholds: { warning: 60 } },
      socket: { bind: '0.0.0.0', port: 3030 },
    }).success,
  );
});

test('a client definition as an entity, and back: extra attributes in `legacy`, client:<name> form', () => {
  const r = validClient({
    name: 'db-01',
    address: '10.0.0.9',
    subscriptions: ['mysql', 'client:db-01'],
    environment: 'prod',
    service: { password: 'secret' },
    redact: ['password'],
  });
  assert.ok(r.success);
  if (!r.success) return;
  const e = clientToEntity(r.output, 1700000000);
  assert.ok(v.safeParse(Entity, e).success, 'a valid core/v2 entity');
  assert.is(e.entity_class, 'proxy');
  assert.equal(e.subscriptions, ['mysql', 'entity:db-01']);
  assert.equal(e.redact, ['password']);
  assert.equal(e.legacy, {
    address: '10.0.0.9',
    keepalives: false,
    environment: 'prod',
    service: { password: 'secret' },
  });
  const c = toLegacyClient(e);
  assert.is(c.address, '10.0.0.9');
  assert.is(c.environment, 'prod');
  assert.is(c.keepalives, false);
  assert.equal(c.redact, ['password']);
  assert.is(c.type, undefined);
  const agent = clientToEntity(r.output, 1, { ...entity });
  assert.is(agent.entity_class, 'agent', 'an agent stays an agent');
  assert.equal(agent.system, entity.system);
});

test('a forced resolution ends flapping; otherwise a 0 keeps flapping', () => {
  const flappingHistory = hist([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
  const previous = {
    ...check,
    status: 1,
    history: flappingHistory,
    state: 'flapping',
    low_flap_threshold: 10,
    high_flap_threshold: 30,
  } as Check;
  const again = mergeCheck(previous, { ...previous, status: 0, history: undefined });
  assert.is(again.state, 'flapping');
  const forced = mergeCheck(previous, { ...previous, status: 0, history: undefined, force_resolve: true });
  assert.is(forced.state, 'passing');
});

test('the legacy mutator gives the legacy event', async () => {
  const ctx: ExecContext = {
    log: createLogger('error', {}, () => {}),
    baseEnv: {},
    assets: async () => ({ env: {} }),
  };
  const out = JSON.parse(
    (await mutate({ kind: 'builtin', name: 'legacy' }, event, 'default', ctx)).toString(),
  );
  assert.equal(out, JSON.parse(JSON.stringify(toLegacyEvent(event))));
  assert.is(out.action, 'create');
});

test.run();
