// suite-timeout: 240
// suite-exclusive: TTL deadlines across a SIGKILL: timing
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startBackend, startEtcd, startNats, waitFor, type Backend } from '../harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';
import { shardOf } from '../../actors/runtime/hash.ts';
import { ownerOf } from '../../actors/runtime/placement.ts';

// Two backend processes sharing one etcd and one nats-server: check TTL switches armed on a node
// that is then SIGKILLed fire on the node that takes its shards, once each, never before the ttl.

const LEASE_TTL = 5;
const MEMBERS = ['t1', 't2'];
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
const backends = new Map<string, Backend>();
const node = (name: string) => backends.get(name)!;

/** Entity names whose entity actor (and so its TTL timers) lives on `owner`. */
function namesOwnedBy(prefix: string, owner: string, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count && i < 10_000; i++) {
    const n = `${prefix}-${i}`;
    if (ownerOf(shardOf('entity', `default/${n}`, SHARD_COUNT), MEMBERS) === owner) out.push(n);
  }
  return out;
}

async function eventOf(b: Backend, entity: string) {
  const r = await b.get(`/api/core/v2/namespaces/default/events/${entity}/dms`);
  return r.status === 200 ? r.body : undefined;
}

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  await Promise.all(
    MEMBERS.map(async (name) => {
      backends.set(
        name,
        await startBackend({ name, etcdUrl: etcdSvc.url, natsUrl: natsSvc.url, leaseTtl: LEASE_TTL }),
      );
    }),
  );
});

test.after(async () => {
  for (const b of backends.values()) await b.kill().catch(() => {});
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('SIGKILL of the node that armed the switches: each fires once on the new owner', async () => {
  // Wait until both nodes serve and t2 owns its shards, so the posts below arm timers on t2.
  await waitFor(
    async () => {
      const hs = await Promise.all(MEMBERS.map((m) => node(m).health()));
      return hs.every((h) => h.status === 200 && h.body.members?.length === 2 && h.body.shards.owned > 0)
        ? true
        : undefined;
    },
    { timeoutMs: 40000, intervalMs: 250, what: 'two settled nodes' },
  );
  // Deadlines before and after the takeover completes.
  const early = namesOwnedBy('ttl-early', 't2', 3);
  const late = namesOwnedBy('ttl-late', 't2', 2);
  const ttlOf = (n: string) => (early.includes(n) ? 6 : 15);
  const postedAt = Date.now();
  for (const n of [...early, ...late]) {
    const r = await node('t1').get(`/api/core/v2/namespaces/default/events/${n}/dms`, {
      method: 'POST',
      body: { check: { status: 0, output: 'ok', ttl: ttlOf(n) } },
    });
    assert.is(r.status, 201, `POST ${n}: ${JSON.stringify(r.body)}`);
  }
  await node('t2').kill('SIGKILL');
  backends.delete('t2');

  for (const n of [...early, ...late]) {
    const ev = await waitFor(
      async () => {
        const e = await eventOf(node('t1'), n);
        return e?.check?.status === 1 ? e : undefined;
      },
      { timeoutMs: 40000, intervalMs: 200, what: `${n} TTL failure` },
    );
    const after = (Date.now() - postedAt) / 1000;
    assert.ok(after >= ttlOf(n) - 0.5, `${n} fired ${after}s after its result, ttl ${ttlOf(n)}`);
    assert.match(ev.check.output, /^Last check execution was \d+ seconds ago$/);
  }
  // Fired once per deadline: failures (it repeats every ttl) no closer than a ttl, each logged once
  // by the surviving node.
  await sleep(2000);
  for (const n of [...early, ...late]) {
    const ev = await eventOf(node('t1'), n);
    const statuses = ev.check.history.map((h: { status: number }) => h.status);
    assert.is(statuses[0], 0, `${n} history ${statuses}`);
    const failures = ev.check.history
      .filter((h: { status: number }) => h.status === 1)
      .map((h: { executed: number }) => h.executed);
    assert.ok(
      failures.length >= 1 && statuses.slice(1).every((s: number) => s === 1),
      `${n} history ${statuses}`,
    );
    for (let i = 1; i < failures.length; i++)
      assert.ok(failures[i] - failures[i - 1] >= ttlOf(n) - 1, `${n}: failures at ${failures}`);
    const fired = node('t1')
      .logs()
      .filter((l) => l.msg === 'check ttl expired' && l.entity === n);
    assert.is(
      fired.length,
      failures.length,
      `${n}: ${fired.length} expiries logged on t1, ${failures.length} in the history`,
    );
  }
});

test.run();
