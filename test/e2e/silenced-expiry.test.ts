// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startBackend, startEtcd, startNats, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, fresh } from '../harness/api.ts';
import { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import { ConfigStore } from '../../actors/config/store.ts';
import { SilencedIndex } from '../../actors/config/silenced-index.ts';
import { configKeys } from '../../proto/names.ts';
import { createLogger } from '../../lib/log.ts';

// Silenced entries with an expiry disappear at their deadline because etcd itself deletes them
// (a lease nobody renews): it happens on time, counts from begin, survives SIGKILL of the node
// that created the entry, and a replace without an expiry removes the deadline.

let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let a: Backend;
let b: Backend;
const onA = coreApi(() => a);
const onB = coreApi(() => b);

const path = (name: string) => `/namespaces/default/silenced/${name}`;
const gone = (name: string, timeoutMs: number) =>
  waitFor(async () => ((await onB(path(name))).status === 404 ? true : undefined), {
    timeoutMs,
    intervalMs: 100,
    what: `${name} gone`,
  });

// B reads its own watched copy of etcd, which may trail a write made on A by a moment.
const present = (name: string) =>
  waitFor(
    async () => {
      const g = await onB(path(name));
      return g.status === 200 ? g.body : undefined;
    },
    { timeoutMs: 5000, intervalMs: 50, what: `${name} on B` },
  );

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  a = await startBackend({ name: 'silenced-a', etcdUrl: etcdSvc.url, natsUrl: natsSvc.url });
  b = await startBackend({ name: 'silenced-b', etcdUrl: etcdSvc.url, natsUrl: natsSvc.url });
});

test.after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
  await Promise.allSettled([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('an entry with expire 2 is listed, then gone after about 2 s', async () => {
  const sub = fresh('exp');
  const name = `${sub}:disk`;
  const r = await onA('/namespaces/default/silenced', 'POST', {
    metadata: {},
    subscription: sub,
    check: 'disk',
    expire: 2,
  });
  assert.is(r.status, 201);
  const got = await present(name);
  assert.is(got.expire, 2);
  assert.is(got.expire_at, got.begin + 2);
  const list = await onB('/namespaces/default/silenced');
  assert.ok(list.body.some((s: any) => s.metadata.name === name));
  await gone(name, 8000);
  const after = await onB('/namespaces/default/silenced');
  assert.not.ok(after.body.some((s: any) => s.metadata.name === name));
});

test('expire counts from a future begin: begin now+2, expire 2 lives until about now+4', async () => {
  const sub = fresh('later');
  const name = `${sub}:*`;
  const begin = Math.floor(Date.now() / 1000) + 2;
  const r = await onA('/namespaces/default/silenced', 'POST', {
    metadata: {},
    subscription: sub,
    begin,
    expire: 2,
  });
  assert.is(r.status, 201);
  const got = (await onA(path(name))).body;
  assert.is(got.begin, begin);
  assert.is(got.expire_at, begin + 2);
  // Past the 2 s of expire but before begin + expire: still there.
  await sleep(Math.max(0, (begin + 1) * 1000 - Date.now()));
  assert.is((await onB(path(name))).status, 200, 'still present at begin + 1 s, over 2 s after creation');
  await gone(name, 8000);
  assert.ok(Date.now() / 1000 >= begin + 1, 'not deleted before begin + expire');
});

test('PUT without expire removes the deadline; PUT with expire sets a new one', async () => {
  const sub = fresh('keep');
  const name = `${sub}:disk`;
  assert.is(
    (await onA(path(name), 'PUT', { metadata: {}, subscription: sub, check: 'disk', expire: 2 })).status,
    201,
  );
  assert.is((await onA(path(name), 'PUT', { metadata: {}, subscription: sub, check: 'disk' })).status, 201);
  const kept = await waitFor(
    async () => {
      const g = await onB(path(name));
      return g.body?.expire_at === 0 ? g.body : undefined;
    },
    { timeoutMs: 5000, what: 'replaced on B' },
  );
  await sleep(4000);
  assert.is((await onB(path(name))).status, 200, 'kept past the old deadline');
  // PATCH puts a deadline back (expire counts from the kept begin).
  const now = Math.floor(Date.now() / 1000);
  const p = await onA(
    path(name),
    'PATCH',
    { expire: now - kept.begin + 2 },
    { 'Content-Type': 'application/merge-patch+json' },
  );
  assert.is(p.status, 200);
  await gone(name, 8000);
});

test('bad expiries get a clear 400 and a huge one is stored, never a 500', async () => {
  for (const bad of [2.5, '3', true]) {
    const r = await onA('/namespaces/default/silenced', 'POST', {
      metadata: {},
      subscription: fresh('bad'),
      expire: bad,
    });
    assert.is(r.status, 400, `expire ${JSON.stringify(bad)}`);
    assert.match(JSON.stringify(r.body), /expire/);
  }
  const r = await onA('/namespaces/default/silenced', 'POST', {
    metadata: {},
    subscription: fresh('bad'),
    begin: 1.5,
  });
  assert.is(r.status, 400);
  const huge = fresh('huge');
  assert.is(
    (await onA('/namespaces/default/silenced', 'POST', { metadata: {}, subscription: huge, expire: 1e15 }))
      .status,
    201,
  );
  await present(`${huge}:*`);
});

test('the silenced index groups entries by namespace, follows changes and removes entries', async () => {
  const adapter = new EtcdAdapter({ endpoints: [etcdSvc.url] });
  const store = new ConfigStore(adapter, createLogger('error'));
  try {
    await store.start();
    const index = new SilencedIndex(store);
    const ns1 = fresh('ns'),
      ns2 = fresh('ns');
    const put = (ns: string, name: string, extra: object = {}, ttl?: number) =>
      store.put(
        configKeys.namespaced('silenced', ns, name),
        { metadata: { name, namespace: ns }, subscription: name.split(':')[0], ...extra },
        { leaseTtlSec: ttl },
      );
    assert.equal(index.forNamespace(ns1), []);
    await put(ns1, 'a:*');
    await put(ns1, 'b:*');
    await put(ns2, 'c:*');
    assert.equal(
      index.forNamespace(ns1).map((s) => s.metadata.name),
      ['a:*', 'b:*'],
    );
    assert.equal(
      index.forNamespace(ns2).map((s) => s.metadata.name),
      ['c:*'],
    );
    const same = index.forNamespace(ns1);
    assert.is(index.forNamespace(ns1), same, 'no rebuild without a change');
    assert.ok(await index.remove(ns1, 'a:*'));
    assert.not.ok(await index.remove(ns1, 'a:*'), 'already gone');
    assert.equal(
      index.forNamespace(ns1).map((s) => s.metadata.name),
      ['b:*'],
    );
    // A leased put through the store disappears on its own, and the index follows.
    await put(ns2, 'd:*', {}, 1);
    assert.equal(
      index.forNamespace(ns2).map((s) => s.metadata.name),
      ['c:*', 'd:*'],
    );
    await waitFor(() => (index.forNamespace(ns2).length === 1 ? true : undefined), {
      timeoutMs: 6000,
      what: 'leased entry gone from the index',
    });
    // A replaced or removed entry's lease is revoked, not left to pile up in etcd.
    const ttlOf = async (id: string) =>
      Number((await adapter.client.leaseClient.leaseTimeToLive({ ID: id })).TTL);
    const key = configKeys.namespaced('silenced', ns2, 'e:*');
    await put(ns2, 'e:*', {}, 3600);
    const first = store.entry(key)!.lease!;
    assert.ok((await ttlOf(first)) > 3000);
    await put(ns2, 'e:*', {}, 7200);
    const second = store.entry(key)!.lease!;
    assert.is.not(second, first);
    await waitFor(async () => ((await ttlOf(first)) < 0 ? true : undefined), {
      timeoutMs: 5000,
      what: 'first lease revoked',
    });
    await put(ns2, 'e:*');
    assert.is(store.entry(key)!.lease, undefined);
    await waitFor(async () => ((await ttlOf(second)) < 0 ? true : undefined), {
      timeoutMs: 5000,
      what: 'second lease revoked',
    });
    await store.replace(
      key,
      { metadata: { name: 'e:*', namespace: ns2 }, subscription: 'e' },
      store.entry(key)!.modRevision,
      { leaseTtlSec: 3600 },
    );
    const third = store.entry(key)!.lease!;
    assert.ok((await ttlOf(third)) > 3000);
    assert.ok(await index.remove(ns2, 'e:*'));
    await waitFor(async () => ((await ttlOf(third)) < 0 ? true : undefined), {
      timeoutMs: 5000,
      what: 'third lease revoked',
    });
  } finally {
    await store.stop();
    await adapter.close();
  }
});

test('the entry still expires when the node that created it is SIGKILLed right after', async () => {
  const sub = fresh('killed');
  const name = `${sub}:disk`;
  const r = await onA('/namespaces/default/silenced', 'POST', {
    metadata: {},
    subscription: sub,
    check: 'disk',
    expire: 3,
  });
  assert.is(r.status, 201);
  await a.kill('SIGKILL');
  await present(name);
  await gone(name, 10000);
});

test.run();
