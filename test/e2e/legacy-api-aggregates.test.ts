// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { bare, legacyApi } from '../harness/legacy.ts';
import { sleep, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh, type Body } from '../harness/api.ts';

// The legacy API's aggregates on one backend: results posted through the REST API with
// check.aggregate (or of a check configured with it) are counted by severity, max_age marks stale
// ones, and a deleted aggregate comes back with the next result.

let backend: Backend;
const api = coreApi(() => backend);

const legacy = legacyApi(() => backend);

/** A result posted through the REST API (`POST /events`), with the check's extra fields. */
const post = async (entity: string, check: string, status: number, output: string, extra: Body = {}) =>
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: entity, namespace: 'default' } },
      check: { metadata: { name: check, namespace: 'default' }, status, output, ...extra },
    }),
    `event ${entity}/${check}`,
  );

/** Waits until the aggregate's summary (the read model follows the store) has `total` results. */
const summaryWith = (name: string, total: number, query = '') =>
  waitFor(
    async () => {
      const r = await legacy(`/aggregates/${name}${query}`);
      return r.status === 200 && r.body.results.total + r.body.results.stale === total ? r.body : undefined;
    },
    { timeoutMs: 10000, what: `aggregate ${name} with ${total} results` },
  );

const AGG = fresh('web');

test.before(async () => {
  backend = await startBackend({ name: 'legacy-aggregates' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  const old = Math.floor(Date.now() / 1000) - 3600;
  await post('agg-a', 'http', 0, 'OK', { aggregate: AGG });
  await post('agg-b', 'http', 2, 'CRITICAL: down', { aggregate: AGG });
  await post('agg-c', 'http', 2, 'CRITICAL: down', { aggregate: AGG, executed: old });
  await post('agg-a', 'disk', 1, 'WARNING', { aggregates: [AGG, 'disks'] });
  await post('agg-b', 'disk', 3, 'UNKNOWN', { aggregate: true, aggregates: [AGG] });
  await post('agg-b', 'plain', 2, 'not in any');
});

test.after(async () => {
  await backend?.stop();
});

test('GET /aggregates/:name: clients, checks, results by severity; max_age counts old results stale only', async () => {
  const s = await summaryWith(AGG, 5);
  assert.equal(s, {
    clients: 3,
    checks: 2,
    results: { ok: 1, warning: 1, critical: 2, unknown: 1, total: 5, stale: 0 },
  });
  assert.equal((await legacy(`/aggregates/${AGG}?max_age=600`)).body.results, {
    ok: 1,
    warning: 1,
    critical: 1,
    unknown: 1,
    total: 4,
    stale: 1,
  });
  // A max_age that is not digits is ignored.
  assert.is((await legacy(`/aggregates/${AGG}?max_age=x`)).body.results.stale, 0);
});

test('GET /aggregates: every name with members ([{name}]), paginated, filtered', async () => {
  await summaryWith('disk', 1);
  const all = await legacy<Body[]>('/aggregates');
  assert.is(all.status, 200);
  const names = all.body.map((a) => a.name);
  for (const n of [AGG, 'disks', 'disk']) assert.ok(names.includes(n), `${n} in ${names}`);
  assert.not.ok(names.includes('plain'));
  assert.ok(all.body.every((a) => Object.keys(a).length === 1));
  const page = await legacy<Body[]>('/aggregates?limit=1&offset=1');
  assert.equal(page.body, [all.body[1]]);
  assert.equal(JSON.parse(page.headers.get('x-pagination')!), {
    limit: 1,
    offset: 1,
    total: all.body.length,
  });
  assert.equal((await legacy('/aggregates?filter.name=disks')).body, [{ name: 'disks' }]);
});

test('GET /aggregates/:name/clients and /checks', async () => {
  assert.equal((await legacy(`/aggregates/${AGG}/clients`)).body, [
    { name: 'agg-a', checks: ['disk', 'http'] },
    { name: 'agg-b', checks: ['disk', 'http'] },
    { name: 'agg-c', checks: ['http'] },
  ]);
  assert.equal((await legacy(`/aggregates/${AGG}/checks`)).body, [
    { name: 'disk', clients: ['agg-a', 'agg-b'] },
    { name: 'http', clients: ['agg-a', 'agg-b', 'agg-c'] },
  ]);
});

test('GET /aggregates/:name/results/:severity: by check then output; bad severity 400 bare', async () => {
  assert.equal((await legacy(`/aggregates/${AGG}/results/critical`)).body, [
    { check: 'http', summary: [{ output: 'CRITICAL: down', total: 2, clients: ['agg-b', 'agg-c'] }] },
  ]);
  assert.equal((await legacy(`/aggregates/${AGG}/results/unknown`)).body, [
    { check: 'disk', summary: [{ output: 'UNKNOWN', total: 1, clients: ['agg-b'] }] },
  ]);
  assert.equal((await legacy('/aggregates/disks/results/ok')).body, []);
  bare(await legacy(`/aggregates/${AGG}/results/bad`), 400, 'severity bad');
  bare(await legacy(`/aggregates/${AGG}/results/OK`), 400, 'severity OK');
});

test('unknown aggregates: 404 bare on every route; bad names 404; wrong methods 405 with Allow', async () => {
  for (const path of ['/nope', '/nope/clients', '/nope/checks', '/nope/results/ok'])
    bare(await legacy(`/aggregates${path}`), 404, path);
  bare(await legacy('/aggregates/nope', 'DELETE'), 404, 'DELETE unknown');
  bare(await legacy('/aggregates/a%20b'), 404, 'a name with a space');
  const post = await legacy(`/aggregates/${AGG}`, 'POST');
  bare(post, 405, 'POST an aggregate');
  assert.is(post.headers.get('allow'), 'GET, HEAD, DELETE');
  const del = await legacy('/aggregates', 'DELETE');
  bare(del, 405, 'DELETE /aggregates');
  assert.is(del.headers.get('allow'), 'GET, HEAD');
  const delClients = await legacy(`/aggregates/${AGG}/clients`, 'DELETE');
  assert.is(delClients.headers.get('allow'), 'GET, HEAD');
});

test('a check configured with aggregate: true feeds the aggregate named after it', async () => {
  const check = fresh('configured');
  created(
    await api(`/namespaces/default/checks/${check}`, 'PUT', {
      metadata: { name: check, namespace: 'default' },
      command: 'true',
      publish: false,
      aggregate: true,
    }),
    'check with aggregate',
  );
  const bad = await api(`/namespaces/default/checks/${check}-bad`, 'PUT', {
    metadata: { name: `${check}-bad`, namespace: 'default' },
    command: 'true',
    publish: false,
    aggregate: 'a b',
  });
  assert.is(bad.status, 400, 'an aggregate name outside the pattern');
  await post('agg-cfg', check, 1, 'WARNING');
  assert.is((await summaryWith(check, 1)).results.warning, 1);
});

test('DELETE /aggregates/:name: 204, then 404; a new result makes its check a member again', async () => {
  const name = fresh('deleted');
  await post('del-a', 'svc', 2, 'down', { aggregate: name });
  await post('del-b', 'svc', 0, 'up', { aggregate: name });
  await summaryWith(name, 2);
  bare(await legacy(`/aggregates/${name}`, 'DELETE'), 204, 'DELETE');
  bare(await legacy(`/aggregates/${name}`), 404, 'after the deletion');
  assert.not.ok((await legacy<Body[]>('/aggregates')).body.some((a) => a.name === name));
  // Results executed in the second of the deletion are gone with it: the next one is a second later.
  const deletedAt = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) <= deletedAt) await sleep(50);
  await post('del-b', 'svc', 1, 'slow', { aggregate: name });
  const back = await summaryWith(name, 1);
  assert.equal(back, {
    clients: 1,
    checks: 1,
    results: { ok: 0, warning: 1, critical: 0, unknown: 0, total: 1, stale: 0 },
  });
  assert.equal((await legacy(`/aggregates/${name}/clients`)).body, [{ name: 'del-b', checks: ['svc'] }]);
});

test.run();
