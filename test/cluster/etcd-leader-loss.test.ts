// suite-timeout: 240
// suite-exclusive: asserts a recovery bound (RECOVERY_MS) after the etcd leader dies
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  ADMIN,
  adminAuth,
  getJson,
  sleep,
  startBackend,
  startEtcdCluster,
  startNats,
  waitFor,
  type Backend,
  type EtcdCluster,
  type NatsServer,
} from '../harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';

// A three-member etcd cluster, one nats-server and two backends given every etcd URL. SIGKILL of the
// etcd leader must cost configuration writes through the REST API at most RECOVERY_MS (issue 14):
// the etcd client moves off the dead member at once, and a write stuck on a follower that forwarded
// it to the dead leader ends at its attempt deadline and is retried elsewhere. No backend may lose
// its membership lease meanwhile, and the configuration watches and etcd-backed logins keep working.

/** The bound of issue 14: the first write that succeeds after the kill ends this soon after it. */
const RECOVERY_MS = 2000;
/**
 * etcd's own share is out of the client's hands: with the default election timeout of 1000 ms, raft
 * waits a random 1000-2000 ms before a follower stands, and a vote that fails costs another round
 * (elections of 1.0-3.0 s measured here, under load). So when the election itself ends later than
 * RECOVERY_MS - CLIENT_SHARE_MS, the bound is CLIENT_SHARE_MS after it: what the client adds.
 */
const CLIENT_SHARE_MS = 500;
/** Loops of writes through each backend, one write after the other, each with this timeout. */
const LOOPS_PER_BACKEND = 4;
const WRITE_TIMEOUT_MS = 3000;
/** Timeout of the writes outside the loops. */
const CALM_TIMEOUT_MS = 10_000;
/**
 * A write that ends sooner than this after the kill committed before it, its answer delayed by the
 * load: nothing commits after the kill until the next leader, a full election timeout (1000 ms) later.
 */
const COMMITTED_BEFORE_MS = 500;
/** Writes go on this long after the kill. */
const AFTER_KILL_MS = 5000;
/** Writes started this long after the kill must all succeed: the cluster has a leader again. */
const SETTLED_MS = 3000;
const LEASE_TTL = 10;

let etcd: EtcdCluster | undefined;
let nats: NatsServer | undefined;
const backends: Backend[] = [];

const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const checkPath = (name: string) => `/api/core/v2/namespaces/default/checks/${name}`;
const check = (name: string) => ({
  metadata: { name, namespace: 'default' },
  command: 'true',
  interval: 60,
  publish: false,
  subscriptions: ['nowhere'],
});

interface Write {
  backend: string;
  loop: number;
  name: string;
  /** Start and end (epoch ms; relative to the kill once it happened). */
  start: number;
  end: number;
  status: number | string;
}

async function putCheck(b: Backend, name: string, timeoutMs: number): Promise<number | string> {
  try {
    const r = await getJson(b.apiUrl + checkPath(name), {
      method: 'PUT',
      headers: adminAuth,
      body: check(name),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return r.status;
  } catch (err) {
    return (err as Error).name;
  }
}

const ok = (w: Write) => w.status === 200 || w.status === 201;

/** Shards owned as each backend's /health reports them. */
async function ownedShards(): Promise<number[]> {
  return Promise.all(
    backends.map(async (b) => {
      const h = await b.health();
      return h.status === 200 ? (h.body.shards.owned as number) : -1;
    }),
  );
}

/** Log lines that say a backend lost (or feared losing) its cluster session. */
const sessionTrouble = (b: Backend) =>
  b.logs().filter((l) => /session lost|lease guard|lease expired/.test(String(l.msg)));

/** When every surviving member first names a leader other than `dead` (polled every 20 ms). */
async function electionTime(dead: EtcdCluster['members'][number]): Promise<number> {
  const survivors = etcd!.members.filter((m) => m !== dead);
  const ids = await Promise.all(survivors.map(async (m) => memberId(m.url)));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const leaders = await Promise.all(
      survivors.map(async (m) => {
        const r = await getJson(`${m.url}/v3/maintenance/status`, {
          method: 'POST',
          body: {},
          signal: AbortSignal.timeout(1000),
        }).catch(() => undefined);
        return r?.status === 200 ? String(r.body.leader ?? '0') : '0';
      }),
    );
    if (leaders.every((l) => l !== '0' && ids.includes(l))) return Date.now();
    await sleep(20);
  }
  return Number.NaN;
}

async function memberId(url: string): Promise<string> {
  const r = await getJson(`${url}/v3/maintenance/status`, {
    method: 'POST',
    body: {},
    signal: AbortSignal.timeout(1000),
  });
  return String(r.body?.header?.member_id);
}

async function memberCount(url: string): Promise<number> {
  const r = await getJson(`${url}/v3/cluster/member/list`, {
    method: 'POST',
    body: {},
    signal: AbortSignal.timeout(2000),
  });
  return (r.body.members as unknown[]).length;
}

test.before(async () => {
  [etcd, nats] = await Promise.all([startEtcdCluster({ size: 3 }), startNats()]);
  const common = {
    etcdUrl: etcd.urls.join(','),
    natsUrl: nats.url,
    logLevel: 'info',
    leaseTtl: LEASE_TTL,
  };
  backends.push(await startBackend({ name: 'l1', ...common }));
  backends.push(await startBackend({ name: 'l2', ...common }));
  await waitFor(
    async () => {
      const owned = await ownedShards();
      return owned.every((n) => n > 0) && owned.reduce((a, n) => a + n, 0) === SHARD_COUNT;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: 'every shard owned, by both backends' },
  );
});

test.after(async () => {
  for (const b of backends) await b.stop().catch(() => {});
  await Promise.all([etcd?.stopAll(), nats?.stop()]);
});

test(`SIGKILL of the etcd leader: configuration writes resume within ${RECOVERY_MS} ms, no backend loses its lease`, async () => {
  const owned = await ownedShards();
  for (const b of backends) {
    const w = await putCheck(b, `warmup-${b.name}`, CALM_TIMEOUT_MS);
    assert.is(w, 201, `a write through ${b.name} before the kill`);
  }
  const leader = await etcd!.leader();
  assert.ok(leader, 'the etcd cluster has a leader');

  // Tight loops of writes through both backends, several per backend so that some write is in
  // flight on the dead member or on a follower when it dies. Each loop writes one check after the
  // other, each write with its own timeout.
  const writes: Write[] = [];
  let stop = false;
  const loops = backends.flatMap((b) =>
    Array.from({ length: LOOPS_PER_BACKEND }, async (_, l) => {
      await sleep(l * 20);
      for (let i = 0; !stop; i++) {
        const name = `loss-${b.name}-${l}-${i}`;
        const start = Date.now();
        const status = await putCheck(b, name, WRITE_TIMEOUT_MS);
        writes.push({ backend: b.name, loop: l, name, start, end: Date.now(), status });
      }
    }),
  );
  await sleep(1000);
  const t0 = Date.now();
  await leader!.kill();
  const killedAfter = Date.now() - t0;
  const elected = electionTime(leader!);
  await sleep(AFTER_KILL_MS);
  stop = true;
  await Promise.all(loops);
  const done = writes.map((w) => ({ ...w, start: w.start - t0, end: w.end - t0 }));

  // Per loop, the first write to succeed after the kill (one committed by the next leader).
  const firstOk = (b: Backend, l: number) =>
    Math.min(
      ...done
        .filter((w) => w.backend === b.name && w.loop === l && ok(w) && w.end > COMMITTED_BEFORE_MS)
        .map((w) => w.end),
    );
  const election = (await elected) - t0;
  const bound = Math.max(RECOVERY_MS, election + CLIENT_SHARE_MS);
  const report: string[] = [
    `leader ${leader!.name} killed (exit seen after ${killedAfter} ms, next leader after ${election} ms)`,
  ];
  for (const b of backends) {
    const mine = done.filter((w) => w.backend === b.name);
    const failed = mine.filter((w) => !ok(w));
    const slowest = Math.max(...mine.map((w) => w.end - w.start));
    const firsts = Array.from({ length: LOOPS_PER_BACKEND }, (_, l) => firstOk(b, l));
    report.push(
      `${b.name}: ${mine.length} writes, first success per loop ${firsts.join('/')} ms after the kill, ` +
        `${failed.length} failed (${[...new Set(failed.map((w) => w.status))].join(',') || '-'}), ` +
        `slowest ${slowest} ms`,
    );
  }
  process.stderr.write(`[etcd-leader-loss] ${report.join('; ')}\n`);
  if (process.env.LEADER_LOSS_TIMELINE)
    for (const w of done.filter((x) => x.end > -200).sort((a, b) => a.start - b.start))
      process.stderr.write(`  ${w.name} ${w.start}..${w.end} ${w.status}\n`);

  for (const b of backends) {
    for (let l = 0; l < LOOPS_PER_BACKEND; l++) {
      const first = firstOk(b, l);
      assert.ok(
        first <= bound,
        `loop ${l} through ${b.name}: the first write to succeed after the kill ended ${first} ms after it, bound ${bound} ms (${report.join('; ')})`,
      );
    }
    const late = done.filter((w) => w.backend === b.name && w.start >= SETTLED_MS && !ok(w));
    assert.equal(
      late.map((w) => `${w.name}: ${w.status}`),
      [],
      `writes started ${SETTLED_MS} ms after the kill through ${b.name} all succeed`,
    );
  }

  // The configuration watch of each backend moved off the dead member too: a write through one
  // backend is seen by the other.
  const pairs: Array<[Backend, Backend]> = [
    [backends[0]!, backends[1]!],
    [backends[1]!, backends[0]!],
  ];
  for (const [from, to] of pairs) {
    const name = `seen-${from.name}`;
    assert.is(await putCheck(from, name, CALM_TIMEOUT_MS), 201);
    await waitFor(async () => (await to.get(checkPath(name))).status === 200, {
      timeoutMs: 2000,
      intervalMs: 50,
      what: `${name}, written through ${from.name}, on ${to.name}`,
    });
  }

  // Logins keep their sessions in etcd, not NATS.
  for (const b of backends) {
    const r = await getJson(`${b.apiUrl}/auth`, {
      headers: basic(ADMIN.username, ADMIN.password),
      signal: AbortSignal.timeout(2000),
    });
    assert.is(r.status, 200, `a login on ${b.name} after the kill`);
  }

  // Membership held: no backend lost its lease or dropped a shard.
  for (const b of backends) {
    const trouble = sessionTrouble(b);
    assert.equal(
      trouble.map((l) => String(l.msg)),
      [],
      `${b.name} kept its cluster session`,
    );
  }
  assert.equal(await ownedShards(), owned, 'each backend owns the shards it owned before the kill');

  // The killed member comes back: three members, and writes go on.
  await leader!.restart();
  await etcd!.waitHealthy();
  for (const url of etcd!.urls) assert.is(await memberCount(url), 3, `members as ${url} sees them`);
  for (const b of backends) {
    const w = await putCheck(b, `after-restart-${b.name}`, CALM_TIMEOUT_MS);
    assert.is(w, 201, `a write through ${b.name} after the member came back`);
  }
});

test.run();
