import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { legacySettings } from '../../proto/legacy/client-definition.ts';
import { deepMerge, loadLegacySettings } from '../../agent/legacy/settings.ts';
import { entityLegacy, legacyAgentConfig } from '../../agent/legacy/agent-config.ts';
import { loadAgentConfig } from '../../agent/config.ts';
import { LEGACY_REDACT } from '../../proto/legacy/redact.ts';
import { tempDir } from '../harness/tmp.ts';

// A legacy client definition (spec 2.1-2.6): every attribute's rule with a message naming it, the
// defaults, the checks scope, the loader's merge and overrides, and what the agent takes from it.

const base = { name: 'i-424242', address: '10.0.0.1', subscriptions: ['web'] };
const problem = (client: Record<string, unknown>, checks?: unknown) => {
  const r = legacySettings({ client: { ...base, ...client }, ...(checks !== undefined ? { checks } : {}) });
  return r.ok ? 'valid' : r.message;
};

const CASES: [string, Record<string, unknown>, string][] = [
  ['name not a string', { name: 3 }, 'client.name must be a string'],
  ['name with a space', { name: 'a b' }, 'client.name cannot contain spaces or special characters'],
  ['name with a newline', { name: 'ab\n' }, 'client.name cannot contain spaces or special characters'],
  ['address', { address: 1 }, 'client.address must be a string'],
  ['subscriptions missing', { subscriptions: undefined }, 'client.subscriptions must be an array of strings'],
  ['subscriptions a string', { subscriptions: 'web' }, 'client.subscriptions must be an array of strings'],
  [
    'a subscription not a string',
    { subscriptions: ['a', 2] },
    'client.subscriptions must each be a non-empty string',
  ],
  ['safe_mode', { safe_mode: 'yes' }, 'client.safe_mode must be a boolean'],
  ['redact', { redact: ['a', 1] }, 'client.redact must be an array of strings'],
  ['keepalives', { keepalives: 1 }, 'client.keepalives must be a boolean'],
  ['signature', { signature: 42 }, 'client.signature must be a string'],
  ['deregister', { deregister: 'true' }, 'client.deregister must be a boolean'],
  ['socket not a hash', { socket: [] }, 'client.socket must be a hash'],
  ['socket.enabled', { socket: { enabled: 'no' } }, 'client.socket.enabled must be a boolean'],
  ['socket.bind', { socket: { bind: 1 } }, 'client.socket.bind must be a string'],
  ['socket.port', { socket: { port: '3030' } }, 'client.socket.port must be an integer from 0 to 65535'],
  [
    'http_socket.port',
    { http_socket: { port: 70000 } },
    'client.http_socket.port must be an integer from 0 to 65535',
  ],
  ['http_socket.user', { http_socket: { user: 1 } }, 'client.http_socket.user must be a string'],
  ['http_socket.password', { http_socket: { password: [] } }, 'client.http_socket.password must be a string'],
  [
    'http_socket.protect_all_endpoints',
    { http_socket: { protect_all_endpoints: 'x' } },
    'client.http_socket.protect_all_endpoints must be a boolean',
  ],
  ['keepalive.handler', { keepalive: { handler: ['x'] } }, 'client.keepalive.handler must be a string'],
  [
    'keepalive.handlers',
    { keepalive: { handlers: 'x' } },
    'client.keepalive.handlers must be an array of strings',
  ],
  ['keepalive.thresholds', { keepalive: { thresholds: 3 } }, 'client.keepalive.thresholds must be a hash'],
  [
    'keepalive.thresholds.warning',
    { keepalive: { thresholds: { warning: 1.5 } } },
    'client.keepalive.thresholds.warning must be an integer',
  ],
  [
    'keepalive.thresholds.critical',
    { keepalive: { thresholds: { critical: 0 } } },
    'client.keepalive.thresholds.critical must be greater than 0',
  ],
  ['registration', { registration: 'x' }, 'client.registration must be a hash'],
  ['registration.handler', { registration: { handler: 1 } }, 'client.registration.handler must be a string'],
  [
    'deregistration.handler',
    { deregistration: { handler: 1 } },
    'client.deregistration.handler must be a string',
  ],
  ['cloudvm without credentials', { cloudvm: {} }, 'client.cloudvm.access_key_id is required'],
  [
    'cloudvm without the secret',
    { cloudvm: { access_key_id: 'a' } },
    'client.cloudvm.secret_access_key is required',
  ],
  [
    'cloudvm instance state not allowed',
    {
      cloudvm: {
        access_key_id: 'a',
        secret_access_key: 'b',
        allowed_instance_states: ['running', 'exploded'],
      },
    },
    'client.cloudvm.allowed_instance_states must be one of pending, running, rebooting, stopping, stopped, shutting-down, terminated (got "exploded")',
  ],
  [
    'cloudvm timeout',
    { cloudvm: { access_key_id: 'a', secret_access_key: 'b', timeout: '10' } },
    'client.cloudvm.timeout must be an integer',
  ],
  [
    'cfgmgr_a without endpoint',
    { cfgmgr_a: { client: 'c', key: 'k' } },
    'client.cfgmgr_a.endpoint is required',
  ],
  [
    'cfgmgr_a flavor',
    { cfgmgr_a: { endpoint: 'https://x', client: 'c', key: 'k', flavor: 'free' } },
    'client.cfgmgr_a.flavor must be one of enterprise, open_source (got "free")',
  ],
  [
    'cfgmgr_a proxy_port',
    { cfgmgr_a: { endpoint: 'https://x', client: 'c', key: 'k', proxy_port: 'x' } },
    'client.cfgmgr_a.proxy_port must be an integer from 0 to 65535',
  ],
  [
    'cfgmgr_a ssl_verify',
    { cfgmgr_a: { endpoint: 'https://x', client: 'c', key: 'k', ssl_verify: 'no' } },
    'client.cfgmgr_a.ssl_verify must be a boolean',
  ],
  ['cfgmgr_b node_name', { cfgmgr_b: { node_name: 1 } }, 'client.cfgmgr_b.node_name must be a string'],
  [
    'cmdb configuration_item',
    { cmdb: { configuration_item: 'x' } },
    'client.cmdb.configuration_item must be a hash',
  ],
  ['cmdb incident', { cmdb: { incident: [] } }, 'client.cmdb.incident must be a hash'],
  ['tsdb tags', { tsdb: { tags: ['a'] } }, 'client.tsdb.tags must be a hash'],
  ['alerting tags', { alerting: { tags: { a: 1 } } }, 'client.alerting.tags must be an array of strings'],
];

for (const [title, client, message] of CASES)
  test(`client attribute: ${title}`, () => assert.is(problem(client), message));

test('every integration scope in its valid form is accepted and kept', () => {
  const scopes = {
    cloudvm: {
      access_key_id: 'a',
      secret_access_key: 'b',
      allowed_instance_states: ['running', 'stopped'],
      region: 'eu-west-1',
      timeout: 5,
    },
    cfgmgr_a: {
      endpoint: 'https://cm',
      flavor: 'open_source',
      client: 'c',
      key: '/k.pem',
      ssl_verify: false,
      proxy_port: 8080,
    },
    cfgmgr_b: { node_name: 'n' },
    cmdb: { configuration_item: { name: 'ci', owner: 'ops' }, incident: { impact: 2 } },
    tsdb: { tags: { dc: 'a' } },
    alerting: { tags: ['x'] },
  };
  const r = legacySettings({ client: { ...base, ...scopes } });
  assert.ok(r.ok, r.ok ? '' : r.message);
  if (r.ok) for (const [k, value] of Object.entries(scopes)) assert.equal(r.settings.client[k], value);
});

test('defaults: client:<name> subscribed, keepalives on, thresholds 120/180, sockets on 127.0.0.1:3030/3031', () => {
  const r = legacySettings({ client: base });
  assert.ok(r.ok);
  if (!r.ok) return;
  const c = r.settings.client;
  assert.equal(c.subscriptions, ['web', 'client:i-424242']);
  assert.is(c.keepalives, true);
  assert.is(c.safe_mode, false);
  assert.is(c.deregister, false);
  assert.equal(c.keepalive.thresholds, { warning: 120, critical: 180 });
  assert.equal(c.socket, { enabled: true, bind: '127.0.0.1', port: 3030 });
  assert.equal(c.http_socket, { enabled: true, bind: '127.0.0.1', port: 3031, protect_all_endpoints: false });
  assert.equal(r.settings.checks, {});
});

test('custom attributes are kept, nested ones too', () => {
  const r = legacySettings({ client: { ...base, environment: 'prod', nested: { attribute: true } } });
  assert.ok(r.ok);
  if (r.ok) {
    assert.is(r.settings.client.environment, 'prod');
    assert.equal(r.settings.client.nested, { attribute: true });
  }
});

test('the checks scope: each check checked, the message naming the check and the attribute', () => {
  assert.is(problem({}, []), 'checks must be a hash');
  assert.is(
    problem({}, { 'bad name': {} }),
    'checks: check name "bad name" cannot contain spaces or special characters',
  );
  assert.is(problem({}, { disk: 3 }), 'checks.disk must be a hash');
  assert.is(problem({}, { disk: { command: 1 } }), 'checks.disk.command must be a string');
  assert.is(problem({}, { disk: { interval: 0 } }), 'checks.disk.interval must be an integer greater than 0');
  assert.is(
    problem({}, { disk: { command: 'x', standalone: true } }),
    'checks.disk.interval or cron is required for a standalone check',
  );
  assert.is(
    problem({}, { disk: { subscribers: 'web' } }),
    'checks.disk.subscribers must be an array of strings',
  );
  assert.is(problem({}, { disk: { timeout: -1 } }), 'checks.disk.timeout must be a number greater than 0');
  assert.is(problem({}, { disk: { ttl: 0 } }), 'checks.disk.ttl must be an integer greater than 0');
  assert.is(
    problem({}, { disk: { low_flap_threshold: 5 } }),
    'checks.disk.high_flap_threshold must be an integer (with low_flap_threshold)',
  );
  assert.is(
    problem({}, { disk: { hooks: { critical: { cmd: 'x' } } } }),
    'checks.disk.hooks must each be a hash with a string command',
  );
  assert.is(
    problem({}, { disk: { source: 'a b' } }),
    'checks.disk.source cannot contain spaces, special characters, or invalid tokens',
  );
  assert.is(
    problem(
      {},
      { disk: { command: 'x', standalone: true, cron: '* * * * *', hooks: { '2': { command: 'y' } } } },
    ),
    'valid',
  );
});

test('deep merge: hashes merge key by key, arrays join without repeats, later scalars win', () => {
  assert.equal(
    deepMerge(
      { client: { name: 'a', subscriptions: ['x', 'y'], socket: { port: 1 } } },
      { client: { name: 'b', subscriptions: ['y', 'z'], socket: { bind: '0.0.0.0' } } },
    ),
    { client: { name: 'b', subscriptions: ['x', 'y', 'z'], socket: { port: 1, bind: '0.0.0.0' } } },
  );
});

test('a directory: *.json merged in name order, other files ignored; MONITOR_CLIENT_* override', () => {
  const dir = tempDir('legacy-def');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'b.json'), JSON.stringify({ client: { name: 'second', subscriptions: ['b'] } }));
  writeFileSync(
    join(dir, 'a.json'),
    JSON.stringify({ client: { name: 'first', subscriptions: ['a'], env: 'x' } }),
  );
  writeFileSync(join(dir, 'c.json.bak'), '{not json');
  const s = loadLegacySettings(dir, {});
  assert.is(s.client.name, 'second');
  assert.equal(s.client.subscriptions, ['a', 'b', 'client:second']);
  assert.is(s.client.env, 'x');
  const o = loadLegacySettings(dir, {
    MONITOR_CLIENT_NAME: 'over',
    MONITOR_CLIENT_ADDRESS: '10.1.1.1',
    MONITOR_CLIENT_SUBSCRIPTIONS: 'p, q',
  });
  assert.is(o.client.name, 'over');
  assert.is(o.client.address, '10.1.1.1');
  assert.equal(o.client.subscriptions, ['p', 'q', 'client:over']);
});

test('a file with bad JSON, a missing path and a bad attribute: one line naming it', () => {
  const dir = tempDir('legacy-bad');
  const file = join(dir, 'client.json');
  writeFileSync(file, '{"client": ');
  assert.throws(() => loadLegacySettings(file, {}), /^--legacy-config: .*client\.json is not valid JSON/);
  assert.throws(() => loadLegacySettings(join(dir, 'nope'), {}), /^--legacy-config: cannot read/);
  writeFileSync(file, JSON.stringify({ client: { name: 'x', subscriptions: ['a'], keepalives: 'no' } }));
  assert.throws(
    () => loadLegacySettings(file, {}),
    /^--legacy-config: client\.keepalives must be a boolean$/,
  );
});

test('name and address default to the host name and an IPv4 address or unknown', () => {
  const dir = tempDir('legacy-defaults');
  const file = join(dir, 'client.json');
  writeFileSync(file, JSON.stringify({ client: { subscriptions: [] } }));
  const s = loadLegacySettings(file, {});
  assert.ok(s.client.name.length > 0);
  assert.ok(
    s.client.address === 'unknown' || /^\d+\.\d+\.\d+\.\d+$/.test(s.client.address),
    s.client.address,
  );
});

test('the agent takes name, subscriptions, keepalive timing and handlers, deregistration and redaction from it', () => {
  const r = legacySettings({
    client: {
      ...base,
      subscriptions: ['web', 'roundrobin:db'],
      keepalive: { handler: 'pager', handlers: ['mail', 'pager'], thresholds: { warning: 40, critical: 60 } },
      deregister: true,
      deregistration: { handler: 'cleanup' },
      redact: ['token'],
    },
  });
  assert.ok(r.ok);
  if (!r.ok) return;
  const flags = loadAgentConfig(['--protobuf'], {}, { defaultConfigFile: '/nonexistent' });
  const c = legacyAgentConfig(flags, r.settings.client);
  assert.is(c.name, 'i-424242');
  assert.equal(c.subscriptions, ['web', 'roundrobin:db', 'entity:i-424242']);
  assert.is(c['keepalive-interval'], 20);
  assert.is(c['keepalive-warning-timeout'], 40);
  assert.is(c['keepalive-critical-timeout'], 60);
  assert.equal(c['keepalive-handlers'], ['pager', 'mail']);
  assert.is(c.deregister, true);
  assert.is(c['deregistration-handler'], 'cleanup');
  assert.equal(c.redact, ['token']);
  assert.is(c.protobuf, false, 'a legacy client speaks JSON');
  assert.ok(
    c['disable-api'] && c['disable-sockets'] && c['statsd-disable'],
    'the current local inputs give way',
  );
});

test('the entity carries the definition redacted, without the signature and the modelled fields', () => {
  const r = legacySettings({
    client: {
      ...base,
      signature: 'sekrit',
      service: { password: 'p' },
      cloudvm: { access_key_id: 'AK', secret_access_key: 'SK' },
    },
  });
  assert.ok(r.ok);
  if (!r.ok) return;
  const legacy = entityLegacy(r.settings.client);
  assert.not.ok('signature' in legacy);
  assert.not.ok('name' in legacy || 'subscriptions' in legacy);
  assert.equal(legacy.service, { password: 'REDACTED' });
  assert.equal(legacy.cloudvm, { access_key_id: 'REDACTED', secret_access_key: 'REDACTED' });
  assert.ok(LEGACY_REDACT.includes('secret_access_key'));
  assert.not.ok(JSON.stringify(legacy).includes('sekrit'));
});

test.run();
