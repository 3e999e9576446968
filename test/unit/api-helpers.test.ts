import { Hono } from 'hono';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mergePatch } from '../../proto/merge-patch.ts';
import { missingProviderAttributes, normalizeProvider } from '../../proto/schemas/resources/authproviders.ts';
import { ApiError } from '../../gateway/api/errors.ts';
import { page, pagingOf } from '../../gateway/api/paginate.ts';
import { CONTINUE_HEADER } from '../../proto/api.ts';
import { EVENT_FIELDS } from '../../gateway/api/selector-fields.ts';
import { eventLabels, metadataLabels, selectorOf } from '../../gateway/api/selectors.ts';
import { unwrap } from '../../gateway/api/http.ts';
import { placeInUrl, silencedResource } from '../../gateway/api/resources.ts';

/** Runs `fn` inside a real Hono request for `query`, returning its result or the ApiError message. */
async function within<T>(query: string, fn: (c: any) => T): Promise<T | string> {
  const app = new Hono();
  let out: T | string = '';
  app.get('/x', (c) => {
    try {
      out = fn(c);
    } catch (e) {
      out = e instanceof ApiError ? `error: ${e.message}` : String(e);
    }
    return c.text('ok');
  });
  await app.request(`/x?${query}`);
  return out;
}

const items = [
  {
    metadata: { name: 'a', labels: { region: 'us-east', tier: 'web' } },
    check: { status: 0 },
    entity: { entity_class: 'agent', subscriptions: ['linux'] },
  },
  {
    metadata: { name: 'b', labels: { region: 'us-west' } },
    check: { status: 2 },
    entity: { entity_class: 'proxy', subscriptions: ['windows'] },
  },
  {
    metadata: { name: 'c' },
    check: { status: 2 },
    entity: { entity_class: 'proxy', subscriptions: ['linux', 'db'] },
  },
];

const select = (query: string) =>
  within(query, (c) => {
    const m = selectorOf(c, EVENT_FIELDS, metadataLabels);
    return m
      ? items
          .filter(m)
          .map((i) => i.metadata.name)
          .join(',')
      : 'none';
  });

test('label selectors', async () => {
  assert.is(await select('labelSelector=' + encodeURIComponent('region == us-east')), 'a');
  assert.is(await select('labelSelector=' + encodeURIComponent('region != us-east')), 'b,c');
  assert.is(await select('labelSelector=' + encodeURIComponent('region in (us-east, us-west)')), 'a,b');
  assert.is(await select('labelSelector=' + encodeURIComponent('region notin (us-east)')), 'b,c');
  assert.is(await select('labelSelector=' + encodeURIComponent('region matches west')), 'b');
  assert.is(await select('labelSelector=' + encodeURIComponent('region == us-east && tier == web')), 'a');
  assert.is(await select(''), 'none');
});

test('field selectors, with and without the resource word, arrays, several parameters', async () => {
  assert.is(await select('fieldSelector=' + encodeURIComponent('check.status == 2')), 'b,c');
  assert.is(await select('fieldSelector=' + encodeURIComponent('event.check.status == 2')), 'b,c');
  assert.is(await select('fieldSelector=' + encodeURIComponent('linux in entity.subscriptions')), 'a,c');
  assert.is(await select('fieldSelector=' + encodeURIComponent('linux notin entity.subscriptions')), 'b');
  assert.is(
    await select(
      'fieldSelector=' +
        encodeURIComponent("entity.entity_class == 'proxy'") +
        '&labelSelector=' +
        encodeURIComponent('region == us-west'),
    ),
    'b',
  );
  assert.is(
    await select('fieldSelector=' + encodeURIComponent('event.name == c')),
    'c',
    'metadata fields by their short name',
  );
});

test('a malformed selector is a 400-class error', async () => {
  assert.match(
    String(await select('fieldSelector=' + encodeURIComponent('check.status'))),
    /^error: invalid fieldSelector/,
  );
  assert.match(String(await select('labelSelector=' + encodeURIComponent('== x'))), /^error:/);
});

test('event labels merge entity, check and event labels', () => {
  assert.equal(
    eventLabels({
      entity: { metadata: { labels: { a: '1', b: '1' } } },
      check: { metadata: { labels: { b: '2' } } },
      metadata: { labels: { c: '3' } },
    }),
    { a: '1', b: '2', c: '3' },
  );
});

test('pages walk a list without gaps or repeats', async () => {
  const keys = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, '0')}`);
  const seen: string[] = [];
  let token: string | undefined;
  for (let n = 0; n < 5; n++) {
    const app = new Hono();
    let got: string[] = [];
    app.get('/x', (c) => {
      got = page(c, keys, (k) => k, pagingOf(c));
      return c.text('ok');
    });
    const res = await app.request(`/x?limit=10${token ? `&continue=${token}` : ''}`);
    seen.push(...got);
    token = res.headers.get(CONTINUE_HEADER) ?? undefined;
    if (!token) break;
  }
  assert.equal(seen, keys);
  assert.match(String(await within('limit=-1', (c) => pagingOf(c))), /^error: limit/);
  assert.match(String(await within('continue=%%%', (c) => pagingOf(c))), /^error: invalid continue token/);
});

test('merge patch follows RFC 7396', () => {
  assert.equal(mergePatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 }, f: [1] }), {
    a: 1,
    b: { d: 3, e: 4 },
    f: [1],
  });
  assert.equal(mergePatch({ a: [1, 2] }, { a: [3] }), { a: [3] });
  assert.equal(mergePatch('x', { a: 1 }), { a: 1 });
});

test('the wrapped form unwraps; a flat body stays as it is', () => {
  assert.equal(
    unwrap({ type: 'CheckConfig', api_version: 'core/v2', metadata: { name: 'x' }, spec: { command: 'c' } }, [
      'CheckConfig',
    ]),
    { command: 'c', metadata: { name: 'x' } },
  );
  assert.equal(unwrap({ metadata: { name: 'x' }, command: 'c' }, ['CheckConfig']), {
    metadata: { name: 'x' },
    command: 'c',
  });
});

test('authentication provider rule: each missing attribute is named', () => {
  const good = {
    Type: 'ldap',
    api_version: 'authentication/v2',
    metadata: { name: 'o' },
    spec: {
      servers: [
        {
          host: 'h',
          binding: { user_dn: 'u', password: 'p' },
          group_search: { base_dn: 'g' },
          user_search: { base_dn: 'u' },
        },
      ],
    },
  };
  assert.equal(missingProviderAttributes(good), []);
  assert.equal(normalizeProvider(good).type, 'ldap');
  const without = (mutate: (b: any) => void) => {
    const b = structuredClone(good) as any;
    mutate(b);
    return missingProviderAttributes(b);
  };
  assert.equal(
    without((b) => delete b.Type),
    ['type'],
  );
  assert.equal(
    without((b) => delete b.api_version),
    ['api_version'],
  );
  assert.equal(
    without((b) => delete b.metadata.name),
    ['metadata.name'],
  );
  assert.equal(
    without((b) => delete b.spec.servers[0].host),
    ['spec.servers[0].host'],
  );
  assert.equal(
    without((b) => delete b.spec.servers[0].binding.password),
    ['spec.servers[0].binding.password'],
  );
  assert.equal(
    without((b) => delete b.spec.servers[0].user_search),
    ['spec.servers[0].user_search.base_dn'],
  );
  assert.equal(
    missingProviderAttributes({
      type: 'OIDC',
      api_version: 'authentication/v2',
      metadata: { name: 'x' },
      spec: {},
    }),
    [],
  );
});

test('a body value like `{"toString": 1}` (JSON.parse makes one) is refused or left to the schema, never a throw', () => {
  const odd = JSON.parse('{"toString": 1}');
  assert.throws(
    () => placeInUrl({ metadata: { name: odd } }, 'x', undefined),
    (e: unknown) => e instanceof ApiError && e.message.includes('{"toString":1}'),
  );
  assert.throws(
    () => placeInUrl({ metadata: { namespace: odd } }, 'x', 'default'),
    (e: unknown) => e instanceof ApiError && e.kind === 'invalid_argument',
  );
  // The silenced schema refuses the subscription afterwards.
  assert.is(silencedResource.nameOf({ subscription: odd, check: 'disk' }), '*:disk');
  const provider = { Type: odd, api_version: 'authentication/v2', metadata: { name: 'o' }, spec: {} };
  assert.equal(missingProviderAttributes(provider), [
    'spec.servers[].host',
    'spec.servers[].binding.user_dn',
    'spec.servers[].binding.password',
    'spec.servers[].group_search.base_dn',
    'spec.servers[].user_search.base_dn',
  ]);
  assert.is(normalizeProvider(provider).type, odd, 'left for the schema to refuse');
});

test.run();
