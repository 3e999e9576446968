// suite-timeout: 240
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from 'nats';
import { coreApi, created } from '../harness/api.ts';
import {
  sleep,
  startBackend,
  startEtcd,
  startLegacyClient,
  startNats,
  tempDir,
  waitFor,
  type Backend,
  type AgentProc,
} from '../harness/index.ts';
import { subjects } from '../../proto/names.ts';

// Round robin for legacy clients (docs/compatibility.md#legacy-client): three clients subscribed
// `roundrobin:web`, connected to two backends sharing etcd and NATS; a check whose subscription is written
// `roundrobin:web` runs each fire on exactly one of them, and the clients receive no fan-out copy.

let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
const backends: Backend[] = [];
const clients: AgentProc[] = [];
let nc: NatsConnection;
const fires: number[] = [];
const api = coreApi(() => backends[0]!);
const runsDir = tempDir('rr-runs');

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  for (const name of ['rr-s1', 'rr-s2'])
    backends.push(await startBackend({ name, etcdUrl: etcdSvc.url, natsUrl: natsSvc.url }));
  // Not in the queue group: sees every request published for the group, one per fire.
  nc = await connect({ servers: natsSvc.url });
  const sub = nc.subscribe(subjects.roundRobin('default', 'web'));
  void (async () => {
    for await (const m of sub) {
      const req = JSON.parse(Buffer.from(m.data).toString()) as { issued: number; config: any };
      if (req.config.metadata.name === 'rr-web') fires.push(req.issued);
    }
  })();
  const names = ['rr-c1', 'rr-c2', 'rr-c3'];
  for (const [i, name] of names.entries())
    clients.push(
      await startLegacyClient({
        name,
        backendUrls: [backends[i % 2]!.agentUrl],
        client: { subscriptions: ['roundrobin:web'] },
      }),
    );
  for (const name of names)
    await waitFor(async () => (await api(`/namespaces/default/entities/${name}`)).status === 200, {
      timeoutMs: 20_000,
      what: `entity ${name}`,
    });
});

test.after(async () => {
  for (const c of clients) await c.kill().catch(() => {});
  await nc?.close().catch(() => {});
  for (const b of backends) await b.stop().catch(() => {});
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

/** The runs the clients recorded: which client ran which fire (the issued its stdin carried). */
function runs(): Array<{ client: string; issued: number }> {
  const out: Array<{ client: string; issued: number }> = [];
  for (const f of readdirSync(runsDir)) {
    try {
      const doc = JSON.parse(readFileSync(join(runsDir, f), 'utf8'));
      out.push({ client: doc.client.name, issued: doc.check.issued });
    } catch {
      /* being written */
    }
  }
  return out;
}

test('roundrobin:web on three clients and two backends: each fire runs on exactly one client', async () => {
  created(
    await api('/namespaces/default/checks', 'POST', {
      metadata: { name: 'rr-web', namespace: 'default' },
      command: `cat > ${runsDir}/:::name:::-$$.json`,
      stdin: true,
      subscriptions: ['roundrobin:web'],
      interval: 1,
      publish: true,
    }),
    'create rr-web',
  );
  await waitFor(() => fires.length >= 10, { timeoutMs: 40_000, intervalMs: 250, what: 'ten fires' });
  const del = await api('/namespaces/default/checks/rr-web', 'DELETE');
  assert.is(del.status, 204);
  await sleep(3000);
  const seen = runs();
  const byIssued = new Map<number, string[]>();
  for (const r of seen) byIssued.set(r.issued, [...(byIssued.get(r.issued) ?? []), r.client]);
  for (const [issued, who] of byIssued) assert.is(who.length, 1, `fire ${issued} ran on ${who.join(', ')}`);
  assert.equal(
    [...byIssued.keys()].sort(),
    [...new Set(fires)].sort(),
    'every fire ran, once; nothing else ran',
  );
  assert.is(fires.length, new Set(fires).size, 'each fire published once');
  const perClient = new Set(seen.map((r) => r.client));
  assert.ok(perClient.size >= 2, `the group shares the work: ${[...perClient].join(', ')}`);
});

test.run();
