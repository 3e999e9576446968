import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import { ConfigError } from '../../proto/flags.ts';
import { BACKEND_ENV_PREFIX, BackendConfig, backendFlags } from '../../proto/schemas/backend-config.ts';
import { readEntityConfig, withManaged } from '../../agent/entity-config.ts';
import { EntityLimit } from '../../actors/entity/limit.ts';
import { SEP, SortedIndex, ReadItem } from '../../actors/entity/read-model.ts';

// The pieces of the agent lifecycle that need no processes: the agent's reading of entity_config,
// the entity limit's arithmetic, and the backend flags that drive them.

const own = {
  metadata: { name: 'web-01', namespace: 'default', labels: { from: 'flags' }, annotations: {} },
  entity_class: 'agent' as const,
  subscriptions: ['linux', 'entity:web-01'],
  redact: ['password'],
  deregister: false,
};

test('entity_config: "not found", malformed, and the managed fields laid over the flags', () => {
  assert.equal(readEntityConfig({ metadata: { name: 'not found' } }), { kind: 'none' });
  assert.is(readEntityConfig('garbage').kind, 'invalid');
  assert.is(readEntityConfig({ metadata: { name: 'x' }, subscriptions: 'not-a-list' }).kind, 'invalid');
  const r = readEntityConfig({
    metadata: { name: 'web-01', labels: { team: 'ops' } },
    subscriptions: ['db'],
    redact: ['token'],
    deregister: true,
    deregistration: { handler: 'h' },
  });
  assert.is(r.kind, 'managed');
  const e = withManaged(own, r.kind === 'managed' ? r.fields : undefined);
  assert.equal(e.metadata.labels, { team: 'ops' });
  assert.equal(e.subscriptions, ['db', 'entity:web-01'], 'the entity subscription is never lost');
  assert.equal(e.redact, ['token']);
  assert.is(e.deregister, true);
  assert.equal(e.deregistration, { handler: 'h' });
  assert.is(e.metadata.name, 'web-01');
  assert.is(withManaged(own, undefined), own);
});

test('entity limit: new entities refused at the limit, existing ones never, 0 means none', () => {
  const index = new SortedIndex();
  const model = { entities: index };
  for (const n of ['a', 'b']) index.set(new ReadItem('default' + SEP + n, '{}'));
  assert.is(new EntityLimit(0, model).refuses('default', 'c'), false);
  assert.is(new EntityLimit(3, model).refuses('default', 'c'), false);
  assert.is(new EntityLimit(2, model).refuses('default', 'c'), true);
  assert.is(new EntityLimit(2, model).refuses('other', 'a'), true, 'the limit is cluster-wide');
  assert.is(new EntityLimit(2, model).refuses('default', 'a'), false);
});

const backend = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  validateConfig(
    BackendConfig,
    mergeSources({
      specs: backendFlags,
      args: parseArgv(argv, backendFlags),
      env,
      envPrefix: BACKEND_ENV_PREFIX,
      configFileFlag: 'config-file',
      defaultConfigFile: '/nonexistent/backend.yml',
    }),
  );

test('backend flags: --entity-limit (MONITOR_ENTITY_LIMIT) and --deregistration-handler', () => {
  const d = backend([]);
  assert.is(d['entity-limit'], 0);
  assert.is(d['deregistration-handler'], '');
  assert.is(backend(['--entity-limit', '100', '--deregistration-handler', 'dereg'])['entity-limit'], 100);
  assert.is(backend([], { MONITOR_ENTITY_LIMIT: '5' })['entity-limit'], 5);
  assert.throws(
    () => backend(['--entity-limit', '-1']),
    (e: Error) => e instanceof ConfigError && /entity-limit/.test(e.message),
  );
  assert.throws(
    () => backend(['--entity-limit', 'lots']),
    (e: Error) => e instanceof ConfigError && /entity-limit/.test(e.message),
  );
});

test.run();
