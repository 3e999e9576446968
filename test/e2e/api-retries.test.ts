// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created, fresh, isError, type Body } from '../harness/api.ts';

// A duplicate is a repeated request, not a repeated event id (docs/compatibility.md): a REST write
// sent again with the same Idempotency-Key is applied once and answered the same; an event that
// reuses the stored event's id with new content (resolving by hand) is applied.

let backend: Backend;
const api = coreApi(() => backend);
const key = (k: string) => ({ 'Idempotency-Key': k });

const event = (entity: string, check: string, status = 0, output = `status ${status}`) => ({
  entity: { metadata: { name: entity } },
  check: { metadata: { name: check }, status, output, interval: 60 },
});

const stored = async (entity: string, check: string) => {
  const r = await api<Body>(`/namespaces/default/events/${entity}/${check}`);
  assert.is(r.status, 200, `GET ${entity}/${check}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

test.before(async () => {
  backend = await startBackend({ name: 'api-retries' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await backend?.stop();
});

test('resolving by hand: an event PUT back with the stored id and status 0 is stored as a new result', async () => {
  const entity = fresh('hand');
  created(
    await api('/namespaces/default/events', 'POST', event(entity, 'disk', 2, 'disk full')),
    'POST failing',
  );
  const failing = await stored(entity, 'disk');
  assert.is(failing.check.status, 2);
  const resolved = { ...failing, check: { ...failing.check, status: 0, output: 'resolved by hand' } };
  created(await api(`/namespaces/default/events/${entity}/disk`, 'PUT', resolved), 'PUT resolved');
  const after = await stored(entity, 'disk');
  assert.is(after.check.status, 0, 'the resolution is stored');
  assert.is(after.check.output, 'resolved by hand');
  assert.equal(
    after.check.history.map((h: { status: number }) => h.status),
    [2, 0],
    'and counted in the history',
  );
});

test('a POST sent again with the same Idempotency-Key is applied once and answered 201 again', async () => {
  const entity = fresh('idem');
  const body = event(entity, 'cpu', 1);
  created(await api('/namespaces/default/events', 'POST', body, key('k-1')), 'first POST');
  created(await api('/namespaces/default/events', 'POST', body, key('k-1')), 'retried POST');
  const e = await stored(entity, 'cpu');
  assert.is(e.check.history.length, 1, 'one history entry: applied once');
  assert.is(e.check.occurrences, 1);
  // Without a key, each request is its own.
  created(await api('/namespaces/default/events', 'POST', body), 'POST without a key');
  assert.is((await stored(entity, 'cpu')).check.history.length, 2);
});

test('the same Idempotency-Key with another body is another request, and is applied', async () => {
  const entity = fresh('idem-body');
  created(await api('/namespaces/default/events', 'POST', event(entity, 'mem', 0), key('k-2')), 'first');
  created(
    await api('/namespaces/default/events', 'POST', event(entity, 'mem', 2), key('k-2')),
    'new content',
  );
  const e = await stored(entity, 'mem');
  assert.equal(
    e.check.history.map((h: { status: number }) => h.status),
    [0, 2],
  );
});

test('retried deletes with an Idempotency-Key answer 204 as the first did; without one, 404', async () => {
  const entity = fresh('idem-del');
  created(await api('/namespaces/default/events', 'POST', event(entity, 'gone', 0)), 'POST');
  assert.is(
    (await api(`/namespaces/default/events/${entity}/gone`, 'DELETE', undefined, key('d-1'))).status,
    204,
  );
  assert.is(
    (await api(`/namespaces/default/events/${entity}/gone`, 'DELETE', undefined, key('d-1'))).status,
    204,
    'retried event delete',
  );
  isError(
    await api(`/namespaces/default/events/${entity}/gone`, 'DELETE'),
    404,
    'a new delete of what is gone',
  );
  assert.is(
    (await api(`/namespaces/default/entities/${entity}`, 'DELETE', undefined, key('d-2'))).status,
    204,
  );
  assert.is(
    (await api(`/namespaces/default/entities/${entity}`, 'DELETE', undefined, key('d-2'))).status,
    204,
    'retried entity delete',
  );
  isError(await api(`/namespaces/default/entities/${entity}`, 'DELETE'), 404, 'a new entity delete');
});

test('an entity POST retried with its key is 201 again, not 409; a PATCH retried returns the entity', async () => {
  const name = fresh('idem-ent');
  const body = { metadata: { name, labels: { a: '1' } } };
  created(await api('/namespaces/default/entities', 'POST', body, key('e-1')), 'first');
  created(await api('/namespaces/default/entities', 'POST', body, key('e-1')), 'retried');
  isError(await api('/namespaces/default/entities', 'POST', body), 409, 'a new create');
  const patch = { metadata: { labels: { b: '2' } } };
  const p1 = await api<Body>(`/namespaces/default/entities/${name}`, 'PATCH', patch, {
    ...key('p-1'),
    'Content-Type': 'application/merge-patch+json',
  });
  const p2 = await api<Body>(`/namespaces/default/entities/${name}`, 'PATCH', patch, {
    ...key('p-1'),
    'Content-Type': 'application/merge-patch+json',
  });
  assert.is(p1.status, 200, JSON.stringify(p1.body));
  assert.is(p2.status, 200, JSON.stringify(p2.body));
  assert.equal(p2.body.metadata.labels, { a: '1', b: '2' });
  assert.equal(p1.body.metadata.labels, p2.body.metadata.labels);
});

test('a malformed Idempotency-Key is a 400', async () => {
  isError(
    await api('/namespaces/default/events', 'POST', event(fresh('bad-key'), 'x'), key('x'.repeat(300))),
    400,
    'too long',
  );
  isError(
    await api('/namespaces/default/events', 'POST', event(fresh('bad-key'), 'x'), key('caf\u00e9')),
    400,
    'not ASCII',
  );
});

test.run();
