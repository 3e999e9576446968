// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, isError, type Body } from '../harness/api.ts';

// Field selectors (docs/compatibility.md#rest-edges): every field Sensu documents for selectors on
// each resource selects what it names, `event.is_silenced` included, absent booleans read as false;
// an unknown or misspelled field is a 400 naming it on every list that takes selectors.

let backend: Backend;
const api = coreApi(() => backend);
const NS = `sf-${Math.random().toString(36).slice(2, 7)}`;
const at = (plural: string) => `/namespaces/${NS}/${plural}`;
const SHA = 'a'.repeat(128);
const ref = (type: string, name: string) => ({ type, name, api_version: 'core/v2' });

/** What the suite creates in its namespace, by collection (cluster-wide ones named sf-...). */
const FIXTURES: Array<[string, string, Body]> = [
  [
    at('assets'),
    'POST',
    { metadata: { name: 'a1' }, url: 'http://example.com/a.tgz', sha512: SHA, filters: ['true'] },
  ],
  [at('assets'), 'POST', { metadata: { name: 'a2' }, url: 'http://example.com/b.tgz', sha512: SHA }],
  [
    at('checks'),
    'POST',
    {
      metadata: { name: 'c1', labels: { team: 'a' } },
      command: 'true',
      interval: 60,
      publish: true,
      round_robin: true,
      runtime_assets: ['a1'],
      subscriptions: ['linux'],
      handlers: ['h1'],
    },
  ],
  [at('checks'), 'POST', { metadata: { name: 'c2' }, command: 'true', interval: 60, subscriptions: ['win'] }],
  [
    at('filters'),
    'POST',
    { metadata: { name: 'f1' }, action: 'allow', expressions: ['true'], runtime_assets: ['a1'] },
  ],
  [at('filters'), 'POST', { metadata: { name: 'f2' }, action: 'deny', expressions: ['true'] }],
  [at('mutators'), 'POST', { metadata: { name: 'm1' }, command: 'cat', runtime_assets: ['a1'] }],
  [
    at('handlers'),
    'POST',
    { metadata: { name: 'h1' }, type: 'pipe', command: 'cat', filters: ['f1'], mutator: 'm1' },
  ],
  [at('handlers'), 'POST', { metadata: { name: 'h2' }, type: 'set', handlers: ['h1'] }],
  [at('hooks'), 'POST', { metadata: { name: 'k1' }, command: 'true' }],
  [
    at('pipelines'),
    'POST',
    { metadata: { name: 'p1' }, workflows: [{ name: 'w', handler: ref('Handler', 'h1') }] },
  ],
  [at('roles'), 'POST', { metadata: { name: 'r1' }, rules: [{ verbs: ['get'], resources: ['checks'] }] }],
  [
    at('rolebindings'),
    'POST',
    {
      metadata: { name: 'rb1' },
      role_ref: { type: 'Role', name: 'r1' },
      subjects: [{ type: 'User', name: 'u' }],
    },
  ],
  [
    '/clusterroles',
    'POST',
    { metadata: { name: `${NS}-cr` }, rules: [{ verbs: ['get'], resources: ['checks'] }] },
  ],
  [
    '/clusterrolebindings',
    'POST',
    {
      metadata: { name: `${NS}-crb` },
      role_ref: { type: 'ClusterRole', name: `${NS}-cr` },
      subjects: [{ type: 'Group', name: 'g' }],
    },
  ],
  [at('silenced'), 'POST', { subscription: 'linux', check: 'c1', expire_on_resolve: true, reason: 'r' }],
  [at('silenced'), 'POST', { check: 'sil' }],
  [
    at('entities'),
    'POST',
    { metadata: { name: 'e1' }, entity_class: 'proxy', subscriptions: ['linux'], deregister: true },
  ],
  [at('entities'), 'POST', { metadata: { name: 'e2' }, entity_class: 'proxy', subscriptions: ['win'] }],
  ['/users', 'POST', { username: `${NS}-user`, password: 'P@ssw0rd!', groups: ['sfg'] }],
];

const event = (entity: string, check: string, status: number, extra: Body = {}) => ({
  entity: { metadata: { name: entity }, entity_class: 'proxy' },
  check: { metadata: { name: check }, status, output: 'x', interval: 60, ...extra },
});

test.before(async () => {
  backend = await startBackend({ name: 'api-selector-fields' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  created(await api('/namespaces', 'POST', { name: NS }), NS);
  for (const [path, method, body] of FIXTURES) created(await api(path, method, body), `${method} ${path}`);
  // e1/c1 critical and silenced (linux:c1), e1/sil silenced (*:sil), e2/c2 passing, not silenced.
  created(
    await api(at('events'), 'POST', event('e1', 'c1', 2, { handlers: ['h1'], subscriptions: ['linux'] })),
    'e1/c1',
  );
  created(await api(at('events'), 'POST', event('e1', 'sil', 1)), 'e1/sil');
  created(
    await api(
      at('events'),
      'POST',
      event('e2', 'c2', 0, { publish: true, round_robin: true, runtime_assets: ['a2'] }),
    ),
    'e2/c2',
  );
  await waitFor(async () => (await api<Body[]>(at('events'))).body.length === 3, {
    timeoutMs: 10000,
    what: 'the three events in the list',
  });
});

test.after(async () => {
  await backend?.stop();
});

const nameOf = (x: Body): string =>
  x.entity && x.check
    ? `${x.entity.metadata.name}/${x.check.metadata.name}`
    : (x.metadata?.name ?? x.username ?? x.name);

/** The names a list answers for a field selector (200 asserted). */
async function names(path: string, selector: string): Promise<string[]> {
  const r = await api<Body[]>(`${path}?fieldSelector=${encodeURIComponent(selector)}`);
  assert.is(r.status, 200, `${path} ${selector}: ${JSON.stringify(r.body)}`);
  return r.body.map(nameOf).sort();
}

/** [list, selector, the names it selects]: each field Sensu documents, on each resource. */
const DOCUMENTED: Array<[string, string, string[]]> = [
  [at('assets'), 'asset.name == a1', ['a1']],
  [at('assets'), `asset.namespace == ${NS}`, ['a1', 'a2']],
  [at('assets'), 'true in asset.filters', ['a1']],
  [at('checks'), 'check.name == c2', ['c2']],
  [at('checks'), `check.namespace == ${NS}`, ['c1', 'c2']],
  [at('checks'), 'check.labels.team == a', ['c1']],
  [at('checks'), 'h1 in check.handlers', ['c1']],
  [at('checks'), 'check.publish == true', ['c1']],
  [at('checks'), 'check.round_robin == false', ['c2']],
  [at('checks'), 'a1 in check.runtime_assets', ['c1']],
  [at('checks'), 'win in check.subscriptions', ['c2']],
  [at('filters'), 'filter.name == f1', ['f1']],
  [at('filters'), 'filter.action == deny', ['f2']],
  [at('filters'), 'a1 in filter.runtime_assets', ['f1']],
  [at('handlers'), 'handler.name == h2', ['h2']],
  [at('handlers'), 'f1 in handler.filters', ['h1']],
  [at('handlers'), 'h1 in handler.handlers', ['h2']],
  [at('handlers'), 'handler.mutator == m1', ['h1']],
  [at('handlers'), 'handler.type == set', ['h2']],
  [at('hooks'), 'hook.name == k1', ['k1']],
  [at('mutators'), 'a1 in mutator.runtime_assets', ['m1']],
  [at('pipelines'), `pipeline.namespace == ${NS}`, ['p1']],
  [at('roles'), 'role.name == r1', ['r1']],
  [at('rolebindings'), 'rolebinding.role_ref.name == r1', ['rb1']],
  [at('rolebindings'), 'rolebinding.role_ref.type == Role', ['rb1', 'system:pipeline']],
  ['/clusterroles', `clusterrole.name == ${NS}-cr`, [`${NS}-cr`]],
  ['/clusterrolebindings', `clusterrolebinding.role_ref.name == ${NS}-cr`, [`${NS}-crb`]],
  [
    '/clusterrolebindings',
    `clusterrolebinding.name == ${NS}-crb && clusterrolebinding.role_ref.type == ClusterRole`,
    [`${NS}-crb`],
  ],
  [at('silenced'), 'silenced.name == linux:c1', ['linux:c1']],
  [at('silenced'), 'silenced.check == sil', ['*:sil']],
  [at('silenced'), 'silenced.subscription == linux', ['linux:c1']],
  [at('silenced'), 'silenced.creator == admin', ['*:sil', 'linux:c1']],
  [at('silenced'), 'silenced.expire_on_resolve == false', ['*:sil']],
  [at('entities'), 'entity.name == e1', ['e1']],
  [at('entities'), `entity.namespace == ${NS}`, ['e1', 'e2']],
  [at('entities'), 'entity.entity_class == proxy', ['e1', 'e2']],
  [at('entities'), 'win in entity.subscriptions', ['e2']],
  [at('entities'), 'entity.deregister == true', ['e1']],
  [at('entities'), 'entity.deregister == false', ['e2']],
  [at('events'), 'event.is_silenced == true', ['e1/c1', 'e1/sil']],
  [at('events'), 'event.is_silenced == false', ['e2/c2']],
  [at('events'), 'event.check.is_silenced == true', ['e1/c1', 'e1/sil']],
  [at('events'), `event.namespace == ${NS}`, ['e1/c1', 'e1/sil', 'e2/c2']],
  [at('events'), 'event.check.name == sil', ['e1/sil']],
  [at('events'), 'h1 in event.check.handlers', ['e1/c1']],
  [at('events'), 'event.check.publish == true', ['e2/c2']],
  [at('events'), 'event.check.round_robin == false', ['e1/c1', 'e1/sil']],
  [at('events'), 'a2 in event.check.runtime_assets', ['e2/c2']],
  [at('events'), 'event.check.state == passing', ['e2/c2']],
  [at('events'), 'event.check.status == 1', ['e1/sil']],
  [at('events'), 'event.check.status in (1, 2)', ['e1/c1', 'e1/sil']],
  [at('events'), 'linux in event.check.subscriptions', ['e1/c1']],
  [at('events'), 'event.entity.name == e2', ['e2/c2']],
  [at('events'), 'event.entity.entity_class == proxy', ['e1/c1', 'e1/sil', 'e2/c2']],
  [at('events'), 'event.entity.deregister == false', ['e2/c2']],
  [at('events'), 'linux notin event.entity.subscriptions', ['e2/c2']],
  ['/events', `event.namespace == ${NS} && event.is_silenced == true`, ['e1/c1', 'e1/sil']],
  ['/users', `user.username == ${NS}-user`, [`${NS}-user`]],
  ['/users', `sfg in user.groups`, [`${NS}-user`]],
  ['/users', `user.disabled == false && user.username == ${NS}-user`, [`${NS}-user`]],
  ['/namespaces', `namespace.name == ${NS}`, [NS]],
];

test('every documented field selects what it names, on every resource', async () => {
  const failures: string[] = [];
  for (const [path, selector, want] of DOCUMENTED) {
    const got = await names(path, selector);
    if (JSON.stringify(got) !== JSON.stringify(want))
      failures.push(`${path} ${selector}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
  assert.equal(failures, [], failures.join('\n'));
});

test('event.is_silenced follows the event stream and the dashboard API too', async () => {
  const r = await backend.get(
    `/api/dashboard/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent('event.is_silenced == true')}`,
  );
  assert.is(r.status, 200, JSON.stringify(r.body));
  const items = (Array.isArray(r.body) ? r.body : r.body.items) as Body[];
  assert.equal(items.map(nameOf).sort(), ['e1/c1', 'e1/sil']);
});

/** [list, a selector naming a field the resource does not have, that field]. */
const UNKNOWN: Array<[string, string, string]> = [
  [at('checks'), 'check.nmae == c1', 'check.nmae'],
  [at('checks'), 'check.subscription == linux', 'check.subscription'],
  [at('checks'), 'linux in check.subscriptons', 'check.subscriptons'],
  [at('events'), 'event.check.stauts == 2', 'event.check.stauts'],
  [at('events'), 'event.is_silnced == true', 'event.is_silnced'],
  [at('events'), 'event.entity.nmae == e1', 'event.entity.nmae'],
  ['/events', 'check.statuses == 2', 'check.statuses'],
  [at('entities'), 'entity.class == proxy', 'entity.class'],
  [at('silenced'), 'silenced.checks == c1', 'silenced.checks'],
  [at('handlers'), 'handler.mutators == m1', 'handler.mutators'],
  [at('assets'), 'asset.filter == x', 'asset.filter'],
  [at('filters'), 'filter.actions == allow', 'filter.actions'],
  [at('rolebindings'), 'rolebinding.role.name == r1', 'rolebinding.role.name'],
  ['/clusterroles', 'clusterrole.nme == x', 'clusterrole.nme'],
  ['/users', 'user.name == admin', 'user.name'],
  ['/namespaces', 'namespace.nam == default', 'namespace.nam'],
  ['/apikeys', 'apikey.user == admin', 'apikey.user'],
];

test('an unknown or misspelled field is a 400 naming it, on every list that takes selectors', async () => {
  for (const [path, selector, field] of UNKNOWN) {
    const r = await api(`${path}?fieldSelector=${encodeURIComponent(selector)}`);
    isError(r, 400, `${path} ${selector}`);
    assert.ok(
      r.body.message.includes(`"${field}"`),
      `${path} ${selector}: names ${field}: ${r.body.message}`,
    );
  }
  const dash = await backend.get(
    `/api/dashboard/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent('event.check.stauts == 2')}`,
  );
  isError(dash, 400, 'the dashboard events API');
  const stream = await backend.get(
    `/api/core/v2/namespaces/${NS}/events/stream?fieldSelector=${encodeURIComponent('event.is_silnced == true')}`,
  );
  isError(stream, 400, 'the live stream');
});

test('label selectors are unchanged: any label key, no 400 for one nobody has', async () => {
  assert.equal(await names(at('checks'), 'check.name matches c'), ['c1', 'c2']);
  const r = await api<Body[]>(`${at('checks')}?labelSelector=${encodeURIComponent('nobody == x')}`);
  assert.is(r.status, 200);
  assert.equal(r.body, []);
  const team = await api<Body[]>(`${at('checks')}?labelSelector=${encodeURIComponent('team == a')}`);
  assert.equal(team.body.map(nameOf), ['c1']);
});

test.run();
