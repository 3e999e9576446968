// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { bare } from '../harness/legacy.ts';
import { getJson, startBackend, waitFor, type Backend, type JsonResponse } from '../harness/index.ts';
import { basic, fresh } from '../harness/api.ts';

// The stashes of the legacy API (port 4567): every route with good and bad input, paths with
// slashes, spaces and percent-encoding, the list's filter, pagination and seconds left, expiry (a
// re-POST clears it, a non-positive one means none, a stash ends on time), and the requests of
// the stash-based silencing of old handlers and dashboards.

let backend: Backend;
const AUTH = basic('stash-user', 'stash-pass');

type Init = { method?: string; body?: unknown; raw?: string; auth?: boolean };
/** A legacy API call with the suite's credentials (unless `auth: false`); `raw` is sent as it is. */
function call(path: string, init: Init = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = init.auth === false ? {} : { ...AUTH };
  let body: string | undefined;
  if (init.raw !== undefined) body = init.raw;
  else if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return getJson(`${backend.legacyUrl}${path}`, { method: init.method ?? 'GET', headers, body });
}

/** The URL path of a stash: each segment percent-encoded, its slashes kept. */
const stashUrl = (path: string, prefix = '/stash/') =>
  prefix + path.split('/').map(encodeURIComponent).join('/');

const create = async (path: string, content: Record<string, unknown>, expire?: number | null) => {
  const r = await call('/stashes', { method: 'POST', body: { path, content, expire } });
  assert.is(r.status, 201, `POST /stashes ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  assert.equal(r.body, { path });
};

interface Listed {
  path: string;
  content: Record<string, unknown>;
  expire: number;
}
const list = async (query = ''): Promise<Listed[]> => {
  const r = await call(`/stashes${query}`);
  assert.is(r.status, 200);
  return r.body as Listed[];
};
/** The list entry of `path` once the list shows `want` of it (the list follows writes within ms). */
const listedWhen = (path: string, want: (s: Listed | undefined) => boolean, what: string) =>
  waitFor(
    async () => {
      const s = (await list()).find((x) => x.path === path);
      return want(s) ? (s ?? true) : undefined;
    },
    { timeoutMs: 5000, intervalMs: 50, what },
  );

test.before(async () => {
  backend = await startBackend({
    name: 'legacy-stash',
    extraArgs: ['--legacy-api-user', 'stash-user', '--legacy-api-password', 'stash-pass'],
  });
});

test.after(async () => {
  await backend?.stop();
});

test('POST /stashes 201 {path}; GET and HEAD of /stash/:path and /stashes/:path answer the content only', async () => {
  const path = fresh('plain');
  await create(path, { key: 'value', n: [1, 2] });
  for (const prefix of ['/stash/', '/stashes/']) {
    const r = await call(stashUrl(path, prefix));
    assert.is(r.status, 200, prefix);
    assert.equal(r.body, { key: 'value', n: [1, 2] });
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    const h = await call(stashUrl(path, prefix), { method: 'HEAD' });
    bare(h, 200, `HEAD ${prefix}`);
  }
});

test('POST /stashes with a bad body: 400 with no body, nothing stored', async () => {
  const path = fresh('bad');
  const bodies: Array<[string, string]> = [
    ['not JSON', '{"path":'],
    ['an array', JSON.stringify([{ path, content: {} }])],
    ['a string', JSON.stringify('x')],
    ['null', 'null'],
    ['no path', JSON.stringify({ content: {} })],
    ['path a number', JSON.stringify({ path: 5, content: {} })],
    ['path empty', JSON.stringify({ path: '', content: {} })],
    ['no content', JSON.stringify({ path })],
    ['content null', JSON.stringify({ path, content: null })],
    ['content an array', JSON.stringify({ path, content: [1] })],
    ['content a string', JSON.stringify({ path, content: 'x' })],
    ['expire a float', JSON.stringify({ path, content: {}, expire: 1.5 })],
    ['expire a string', JSON.stringify({ path, content: {}, expire: '60' })],
    ['expire too large', JSON.stringify({ path, content: {}, expire: 1e16 })],
  ];
  for (const [what, raw] of bodies) bare(await call('/stashes', { method: 'POST', raw }), 400, what);
  bare(await call(stashUrl(path)), 404, 'nothing stored');
});

test('POST /stash(es)/:path: the whole body is the content, 201 {path}; a non-object body is 400', async () => {
  const path = fresh('direct');
  for (const prefix of ['/stash/', '/stashes/']) {
    const content = { via: prefix, path: 'inside the content', expire: 5 };
    const r = await call(stashUrl(path, prefix), { method: 'POST', body: content });
    assert.is(r.status, 201, prefix);
    assert.equal(r.body, { path });
    assert.equal((await call(stashUrl(path))).body, content, 'stored as given, expire included');
  }
  const s = await listedWhen(path, (x) => x?.content.via === '/stashes/', 'the direct stash listed');
  assert.is((s as Listed).expire, -1, 'no expiry: the body is content only');
  const refused: Array<[string, string]> = [
    ['not JSON', 'nope'],
    ['an array', '[]'],
    ['a number', '5'],
    ['null', 'null'],
    ['empty', ''],
  ];
  for (const [what, raw] of refused) bare(await call(stashUrl(path), { method: 'POST', raw }), 400, what);
  assert.is((await call(stashUrl(path))).body.via, '/stashes/', 'unchanged by the refused posts');
});

test('paths with slashes, spaces and percent-encoding round-trip', async () => {
  const paths = [
    `${fresh('deep')}/a/b/c`,
    `${fresh('space')}/with space/x`,
    `${fresh('pct')}/100%/%41%2F`,
    `${fresh('odd')}/é ü?#&=+.;:@`,
  ];
  for (const path of paths) {
    await create(path, { path });
    const r = await call(stashUrl(path));
    assert.is(r.status, 200, path);
    assert.equal(r.body, { path });
    const s = (await listedWhen(path, (x) => x !== undefined, `${path} listed`)) as Listed;
    assert.equal(s.content, { path });
  }
  // A slash may come encoded: `%2F` names the same stash as `/`.
  const [deep] = paths;
  assert.equal((await call(`/stash/${deep!.replace(/\//g, '%2F')}`)).body, { path: deep });
  // `%20` in the URL is a space of the path, as given through POST /stash/:path.
  const spaced = `${fresh('spaced')} x`;
  assert.is(
    (await call(`/stash/${spaced.replace(' ', '%20')}`, { method: 'POST', body: { a: 1 } })).status,
    201,
  );
  assert.equal((await call(stashUrl(spaced))).body, { a: 1 });
  bare(await call(stashUrl(spaced).replace('%20', '+')), 404, 'a plus is not a space in a path');
});

test('DELETE /stash(es)/:path: 204, then 404 for reads and deletes; unknown paths are 404 with no body', async () => {
  for (const prefix of ['/stash/', '/stashes/']) {
    const path = `${fresh('del')}/x y`;
    await create(path, { a: 1 });
    await listedWhen(path, (x) => x !== undefined, 'listed');
    bare(await call(stashUrl(path, prefix), { method: 'DELETE' }), 204, `DELETE ${prefix}`);
    bare(await call(stashUrl(path)), 404, 'read after delete');
    bare(await call(stashUrl(path), { method: 'HEAD' }), 404, 'HEAD after delete');
    bare(await call(stashUrl(path, prefix), { method: 'DELETE' }), 404, 'second delete');
    await listedWhen(path, (x) => x === undefined, 'gone from the list');
  }
  bare(await call('/stash/never-there'), 404, 'unknown stash');
  bare(await call('/stash/'), 404, 'empty path');
  bare(await call('/stashes/'), 404, 'empty path under /stashes/');
  bare(await call('/stash'), 404, '/stash alone');
  bare(await call('/stashesx'), 404, 'not a stash route');
});

test('wrong methods: 405 with Allow, no body', async () => {
  const cases: Array<[string, string, string]> = [
    ['PUT', '/stashes', 'GET, HEAD, POST'],
    ['DELETE', '/stashes', 'GET, HEAD, POST'],
    ['PATCH', '/stashes', 'GET, HEAD, POST'],
    ['PUT', '/stash/a/b', 'GET, HEAD, POST, DELETE'],
    ['PATCH', '/stashes/a', 'GET, HEAD, POST, DELETE'],
  ];
  for (const [method, path, allow] of cases) {
    const r = await call(path, { method, body: {} });
    bare(r, 405, `${method} ${path}`);
    assert.is(r.headers.get('allow'), allow, `${method} ${path}`);
  }
});

test('every stash route without credentials is 401', async () => {
  for (const [method, path] of [
    ['GET', '/stashes'],
    ['POST', '/stashes'],
    ['GET', '/stash/a'],
    ['POST', '/stash/a'],
    ['DELETE', '/stash/a'],
  ] as const) {
    const body = method === 'GET' ? undefined : { path: 'a', content: {} };
    const r = await call(path, { method, auth: false, body });
    bare(r, 401, `${method} ${path}`);
  }
  bare(await call('/stash/a'), 404, 'the stash was not written');
});

test('GET /stashes: {path, content, expire} with the seconds left or -1; a re-POST clears the expiry', async () => {
  const path = fresh('ttl-left');
  await create(path, { a: 1 }, 600);
  const timed = (await listedWhen(path, (x) => x !== undefined, 'listed')) as Listed;
  assert.equal(Object.keys(timed).sort(), ['content', 'expire', 'path']);
  assert.ok(timed.expire > 590 && timed.expire <= 600, `expire ${timed.expire}`);
  assert.equal(timed.content, { a: 1 });
  // Re-POSTed without expire (either route): the expiry is gone, as a plain write of the old store.
  await create(path, { a: 2 });
  assert.is(((await listedWhen(path, (x) => x?.content.a === 2, 'rewritten')) as Listed).expire, -1);
  await create(path, { a: 3 }, 300);
  const again = (await listedWhen(path, (x) => x?.content.a === 3, 'timed again')) as Listed;
  assert.ok(again.expire > 290 && again.expire <= 300, `expire ${again.expire}`);
  assert.is((await call(stashUrl(path), { method: 'POST', body: { a: 4 } })).status, 201);
  assert.is(((await listedWhen(path, (x) => x?.content.a === 4, 'direct rewrite')) as Listed).expire, -1);
  // expire null is no expiry.
  const nul = fresh('ttl-null');
  await create(nul, {}, null);
  assert.is(((await listedWhen(nul, (x) => x !== undefined, 'listed')) as Listed).expire, -1);
});

test('a zero or negative expire means no expiry: listed with -1, an earlier expiry cleared', async () => {
  for (const expire of [-1, 0, -100]) {
    const path = fresh('neg');
    await create(path, { a: 1 }, 3600);
    await create(path, { a: 2 }, expire);
    assert.is((await call(stashUrl(path))).status, 200, `expire ${expire}: still there`);
    const listed = (await listedWhen(path, (x) => x?.content.a === 2, 'rewritten')) as Listed;
    assert.is(listed.expire, -1, `expire ${expire}: no expiry left`);
    await create(`${path}-new`, { a: 1 }, expire);
    assert.is((await call(stashUrl(`${path}-new`))).status, 200, `new stash with expire ${expire}`);
  }
});

test('a stash with expire 2 ends on time: readable before, gone (reads, list, its actor) after, never early', async () => {
  const path = `${fresh('expiring')}/x`;
  const postedAt = Date.now();
  await create(path, { soon: true }, 2);
  assert.is((await call(stashUrl(path))).status, 200);
  await waitFor(async () => ((await call(stashUrl(path))).status === 404 ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: 'the stash gone',
  });
  const goneAfter = Date.now() - postedAt;
  assert.ok(goneAfter >= 2000, `gone ${goneAfter} ms after the POST`);
  assert.ok(!(await list()).some((s) => s.path === path), 'not listed');
  // The deadline ran in the stash's actor, which ended it (not only hidden by the readers' clock).
  const fired = await waitFor(
    () => backend.logs().find((l) => l.msg === 'stash expired' && l.path === path),
    { timeoutMs: 10_000, intervalMs: 100, what: 'the expiry logged' },
  );
  assert.ok(fired.expired_at - postedAt >= 2000, 'the deadline is the POST + 2 s');
  bare(await call(stashUrl(path), { method: 'DELETE' }), 404, 'nothing left to delete');
});

test('GET /stashes: filter.* and limit/offset with X-Pagination; an offset past the end is []', async () => {
  const tag = fresh('page');
  for (const i of [1, 2, 3, 4]) await create(`${tag}/${i}`, { tag, i });
  await listedWhen(`${tag}/4`, (x) => x !== undefined, 'the four listed');
  const all = await list();
  assert.is(all.length >= 4, true);
  const sorted = all.map((s) => s.path);
  assert.equal(sorted, [...sorted].sort(), 'ordered by path');

  const unpaged = await call('/stashes');
  assert.is(unpaged.headers.get('x-pagination'), null, 'no pagination without limit');

  const page = await call('/stashes?limit=2&offset=1');
  assert.is(page.status, 200);
  assert.equal(JSON.parse(page.headers.get('x-pagination')!), { limit: 2, offset: 1, total: all.length });
  assert.equal(page.body, all.slice(1, 3));

  const past = await call(`/stashes?limit=2&offset=${all.length + 5}`);
  assert.is(past.status, 200);
  assert.equal(past.body, []);

  const filtered = await call(`/stashes?filter.content.tag=${tag}`);
  assert.equal(
    (filtered.body as Listed[]).map((s) => s.path),
    [1, 2, 3, 4].map((i) => `${tag}/${i}`),
  );
  const one = await call(`/stashes?filter.content.tag=${tag}&filter.content.i=3&limit=5`);
  assert.equal(
    (one.body as Listed[]).map((s) => s.path),
    [`${tag}/3`],
  );
  assert.equal(JSON.parse(one.headers.get('x-pagination')!), { limit: 5, offset: 0, total: 1 });
  const bad = await call('/stashes?limit=x&offset=-1');
  assert.is(bad.headers.get('x-pagination'), null, 'a limit that is not digits is ignored');
  bare(await call('/stashes', { method: 'HEAD' }), 200, 'HEAD /stashes');
});

test("stash-based silencing: a dashboard's silence stash answers the handler's lookups with 200, others 404", async () => {
  const client = fresh('web');
  // As Uchiwa wrote it.
  const r = await call('/stashes', {
    method: 'POST',
    body: {
      path: `silence/${client}/disk`,
      content: { reason: 'maintenance', source: 'uchiwa', timestamp: 1700000000 },
      expire: 3600,
    },
  });
  assert.is(r.status, 201);
  assert.equal(r.body, { path: `silence/${client}/disk` });
  // The three lookups of sensu-plugin's handler filter: 200 means silenced.
  assert.is((await call(`/stash/silence/${client}/disk`)).status, 200);
  assert.equal((await call(`/stash/silence/${client}/disk`)).body.source, 'uchiwa');
  bare(await call(`/stash/silence/${client}`), 404, 'the client is not silenced as a whole');
  bare(await call(`/stash/silence/all/disk`), 404, 'the check is not silenced everywhere');
  // A client-wide and a check-wide silence, as the older dashboards wrote them (no expiry).
  await create(`silence/${client}`, { reason: 'all of it' }, 60);
  assert.is((await call(`/stash/silence/${client}`)).status, 200);
  await create('silence/all/disk', { reason: 'everywhere' });
  assert.is((await call('/stash/silence/all/disk')).status, 200);
  // Unsilenced by deleting the stash.
  for (const p of [`silence/${client}/disk`, `silence/${client}`, 'silence/all/disk']) {
    bare(await call(`/stash/${p}`, { method: 'DELETE' }), 204, `DELETE ${p}`);
    bare(await call(`/stash/${p}`), 404, `${p} no longer silences`);
  }
});

test.run();
