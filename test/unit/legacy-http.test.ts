import { Hono } from 'hono';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatch, NAME, route } from '../../gateway/legacy/router.ts';
import { listed, readObject, LegacyError } from '../../gateway/legacy/http.ts';
import type { LegacyEnv } from '../../gateway/legacy/env.ts';

// The legacy API's routing and list helpers (gateway/legacy/router.ts, http.ts) inside real Hono
// requests: 405 with Allow in the legacy order, 404, HEAD as GET, decoded captures, pagination,
// filters, and bodies that are not JSON objects.

const ok = (what: string) => (c: any, params: string[]) => c.json({ what, params });

function app() {
  const a = new Hono<LegacyEnv>();
  const routes = [
    route('GET', '/things', ok('list')),
    route('POST', '/things', ok('create')),
    route('GET', `/things/${NAME}`, ok('one')),
    route('DELETE', `/things/${NAME}`, ok('delete')),
    route('GET', '/stash(?:es)?/(.+)', ok('stash')),
    route('POST', '/only-post', ok('post')),
  ];
  a.all('*', (c) => dispatch(routes, c));
  a.onError((err, c) => (err instanceof LegacyError ? c.body(null, err.status) : c.text(String(err), 500)));
  return a;
}

test('a path known under other methods is a 405 naming them in the order GET, HEAD, POST, DELETE', async () => {
  const r = await app().request('/things', { method: 'PUT' });
  assert.is(r.status, 405);
  assert.is(r.headers.get('Allow'), 'GET, HEAD, POST');
  assert.is(await r.text(), '');
  const one = await app().request('/things/a', { method: 'POST' });
  assert.is(one.headers.get('Allow'), 'GET, HEAD, DELETE');
  const post = await app().request('/only-post');
  assert.is(post.status, 405);
  assert.is(post.headers.get('Allow'), 'POST');
});

test('an unknown path, or a name outside [\\w.-], is a 404 with no body', async () => {
  for (const path of ['/nothing', '/things/foo%20bar', '/things/a/b', '/things/']) {
    const r = await app().request(path);
    assert.is(r.status, 404, path);
    assert.is(await r.text(), '', path);
  }
});

test('HEAD is answered as GET without a body', async () => {
  const r = await app().request('/things/abc', { method: 'HEAD' });
  assert.is(r.status, 200);
  assert.is(await r.text(), '');
});

test('captures are percent-decoded; a stash path takes slashes and spaces', async () => {
  const r = await app().request('/stash/silence/web%2001/check%2Fx');
  assert.equal(((await r.json()) as { params: string[] }).params, ['silence/web 01/check/x']);
  const bad = await app().request('/stashes/%zz');
  assert.equal(((await bad.json()) as { params: string[] }).params, ['%zz'], 'undecodable text kept as is');
});

async function listedOf(query: string, items: unknown[], method = 'GET') {
  const a = new Hono();
  let header: string | null = null;
  let out: unknown;
  a.all('/x', (c) => {
    out = listed(c, items);
    return c.text('ok');
  });
  const r = await a.request(`/x?${query}`, { method });
  header = r.headers.get('X-Pagination');
  return { out, header };
}

const ITEMS = [
  { name: 'a', interval: 60, check: { status: 1 } },
  { name: 'b', interval: 1, check: { status: 0 } },
  { name: 'c', interval: 1, check: { status: 2 } },
];

test('limit and offset page a list and say the total in X-Pagination; an offset past the end is []', async () => {
  const p = await listedOf('limit=2&offset=1', ITEMS);
  assert.equal(
    (p.out as Array<{ name: string }>).map((i) => i.name),
    ['b', 'c'],
  );
  assert.equal(JSON.parse(p.header!), { limit: 2, offset: 1, total: 3 });
  assert.equal((await listedOf('limit=5&offset=9', ITEMS)).out, []);
  const bad = await listedOf('limit=x&offset=1', ITEMS);
  assert.is((bad.out as unknown[]).length, 3, 'a limit that is not digits is ignored');
  assert.is(bad.header, null);
  assert.is(JSON.parse((await listedOf('limit=1&offset=-1', ITEMS)).header!).offset, 0);
});

test('filter.<path>=value keeps items whose attribute has that text, nested paths too', async () => {
  const byInterval = await listedOf('filter.interval=1', ITEMS);
  assert.equal(
    (byInterval.out as Array<{ name: string }>).map((i) => i.name),
    ['b', 'c'],
  );
  const both = await listedOf('filter.interval=1&filter.check.status=2', ITEMS);
  assert.equal(
    (both.out as Array<{ name: string }>).map((i) => i.name),
    ['c'],
  );
  assert.equal((await listedOf('filter.missing=1', ITEMS)).out, []);
  assert.equal((await listedOf('filter.__proto__.x=1', ITEMS)).out, ITEMS, 'prototype keys are ignored');
  const decoded = await listedOf('filter.name=a%20b', [{ name: 'a b' }]);
  assert.is((decoded.out as unknown[]).length, 1, 'values are percent-decoded');
});

test('a body that is not a JSON object is a LegacyError 400', async () => {
  for (const body of ['', 'nope', '[]', '"x"', '1', 'null']) {
    const a = new Hono<LegacyEnv>();
    let status = 0;
    a.post('/x', async (c) => {
      try {
        await readObject(c);
        status = 200;
      } catch (e) {
        status = e instanceof LegacyError ? e.status : 500;
      }
      return c.text('');
    });
    await a.request('/x', { method: 'POST', body });
    assert.is(status, 400, body);
  }
});

test.run();
