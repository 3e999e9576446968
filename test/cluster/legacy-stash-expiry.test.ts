// suite-timeout: 180
// suite-exclusive: stash deadlines across a SIGKILL of their owner, never early: timing
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  getJson,
  sleep,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type Backend,
} from '../harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';
import { shardOf } from '../../actors/runtime/hash.ts';
import { ownerOf } from '../../actors/runtime/placement.ts';

// Three backends sharing one etcd and one nats-server: a stash's expiry is a durable deadline of its
// stash actor, so a stash posted with an expiry ends on time even when the node owning its actor is
// SIGKILLed right after: never before the expiry, at the latest once another node took the shard.

const LEASE_TTL = 5;
/** Due after the shard moved (the lease runs out within LEASE_TTL): the next owner fires it on time. */
const EXPIRE = 8;
/** Due before the shard can have moved: the next owner fires it late, as soon as it took the shard. */
const EXPIRE_EARLY = 2;
const MEMBERS = ['s1', 's2', 's3'];
let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
const backends = new Map<string, Backend>();
const node = (name: string) => backends.get(name)!;

/** A stash path under `prefix` whose stash actor lives on `owner` once the three nodes settled. */
function pathOwnedBy(prefix: string, owner: string): string {
  for (let i = 0; ; i++) {
    const p = `${prefix}/${i} x`;
    if (ownerOf(shardOf('stash', p, SHARD_COUNT), MEMBERS) === owner) return p;
  }
}

const url = (b: Backend, path: string) =>
  `${b.legacyUrl}/stash/${path.split('/').map(encodeURIComponent).join('/')}`;
const post = async (b: Backend, body: object) =>
  assert.is((await getJson(`${b.legacyUrl}/stashes`, { method: 'POST', body })).status, 201);
const status = async (b: Backend, path: string) => (await getJson(url(b, path))).status;

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  const start = async (name: string) => {
    backends.set(
      name,
      await startBackend({
        name,
        etcdUrl: etcdSvc.url,
        natsUrl: natsSvc.url,
        leaseTtl: LEASE_TTL,
        logLevel: 'info',
      }),
    );
  };
  // The first node alone initializes the cluster, then the others join.
  await start(MEMBERS[0]!);
  await Promise.all(MEMBERS.slice(1).map(start));
});

test.after(async () => {
  for (const b of backends.values()) await b.kill().catch(() => {});
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('SIGKILL of the node owning stashes: they expire on time (never early) on a survivor; others stay', async () => {
  // Every node owns exactly the shards placement gives it, so the owner computed below is the owner.
  const placed = Array.from({ length: SHARD_COUNT }, (_, s) => ownerOf(s, MEMBERS));
  const expected = MEMBERS.map((m) => placed.filter((o) => o === m).length);
  await waitFor(
    async () => {
      const hs = await Promise.all(MEMBERS.map((m) => node(m).health()));
      const settled = hs.every(
        (h, i) => h.status === 200 && h.body.members?.length === 3 && h.body.shards.owned === expected[i],
      );
      return settled || undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: 'three settled nodes' },
  );
  const expiring = pathOwnedBy('silence/web-01', 's3');
  const early = pathOwnedBy('early', 's3');
  const kept = pathOwnedBy('kept', 's3');
  const cleared = pathOwnedBy('cleared', 's3');

  const postedAt = Date.now();
  await post(node('s1'), { path: expiring, content: { reason: 'x' }, expire: EXPIRE });
  await post(node('s1'), { path: early, content: {}, expire: EXPIRE_EARLY });
  await post(node('s1'), { path: kept, content: { keep: true } });
  // An expiry cleared by a re-POST stays cleared on the next owner.
  await post(node('s2'), { path: cleared, content: { v: 1 }, expire: EXPIRE });
  await post(node('s2'), { path: cleared, content: { v: 2 } });
  assert.is(await status(node('s2'), expiring), 200, 'readable on another node before the kill');

  await node('s3').kill('SIGKILL');
  backends.delete('s3');

  await waitFor(async () => (await status(node('s1'), expiring)) === 404 || undefined, {
    // The expiry, or the lease running out and the takeover, with room for a slow machine.
    timeoutMs: EXPIRE * 1000 + 30_000,
    intervalMs: 100,
    what: 'the stash gone',
  });
  const goneAfter = Date.now() - postedAt;
  assert.ok(goneAfter >= EXPIRE * 1000, `gone ${goneAfter} ms after the POST, before its expiry`);
  assert.is(await status(node('s2'), early), 404, 'the early one is gone too');

  // Each actor ended its stash on the node that took the shard: the deadline ran there, never
  // before its time (the early one late, once the shard had moved).
  for (const [path, expire] of [
    [expiring, EXPIRE],
    [early, EXPIRE_EARLY],
  ] as const) {
    const fired = await waitFor(
      () =>
        ['s1', 's2'].flatMap((m) => node(m).logs()).find((l) => l.msg === 'stash expired' && l.path === path),
      { timeoutMs: 30_000, intervalMs: 200, what: `the expiry of ${path} run by a survivor` },
    );
    assert.ok(fired.expired_at - postedAt >= expire * 1000, `${path}: the deadline is the POST + expire`);
    assert.ok(
      Date.parse(fired.time) >= fired.expired_at,
      `${path} fired at ${fired.time}, deadline ${fired.expired_at}`,
    );
  }

  // Past the deadline the cleared stash had (set a moment after the expiring one's).
  await sleep(Math.max(0, postedAt + EXPIRE * 1000 + 1000 - Date.now()));
  for (const m of ['s1', 's2']) {
    const list = await getJson(`${node(m).legacyUrl}/stashes`);
    const paths = (list.body as Array<{ path: string }>).map((s) => s.path);
    assert.ok(!paths.includes(expiring) && !paths.includes(early), `${m} lists an expired stash: ${paths}`);
    assert.ok(paths.includes(kept) && paths.includes(cleared), `${m} lists ${paths}`);
  }
  assert.equal((await getJson(url(node('s2'), kept))).body, { keep: true });
  assert.equal(
    (await getJson(url(node('s2'), cleared))).body,
    { v: 2 },
    'the cleared expiry did not come back',
  );
});

test.run();
