// suite-timeout: 240
// suite-exclusive: SIGKILL of a node mid-handler, timed takeover
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  adminAuth,
  sleep,
  startBackend,
  startEtcd,
  startNats,
  tempDir,
  waitFor,
  type Backend,
} from '../harness/index.ts';

// Two backends on one etcd and one nats-server share the pipeline work queue. A handler job whose
// node is SIGKILLed while the handler runs is run again by the other node (at least once); with no
// failure each job runs exactly once.

let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
const backends = new Map<string, Backend>();
let dir: string;

const call = (b: Backend, path: string, method = 'GET', body?: unknown) =>
  b.get(`/api/core/v2${path}`, {
    method,
    headers: adminAuth,
    ...(body === undefined ? {} : { body: body as object }),
  });

/** Files `<kind>.<node>.<pid>` the handler leaves: `start` when it begins, `done` (the payload) when it ends. */
const marks = (kind: 'start' | 'done') =>
  readdirSync(dir)
    .filter((f) => f.startsWith(`${kind}.`))
    .map((f) => ({ node: f.split('.')[1]!, body: readFileSync(join(dir, f), 'utf8') }));

test.before(async () => {
  etcdSvc = await startEtcd();
  natsSvc = await startNats();
  dir = join(tempDir('pipeline-failover'), 'out');
  mkdirSync(dir, { recursive: true });
  for (const name of ['pf-1', 'pf-2'])
    backends.set(name, await startBackend({ name, etcdUrl: etcdSvc.url, natsUrl: natsSvc.url, leaseTtl: 5 }));
  const b = backends.get('pf-1')!;
  const r = await call(b, '/namespaces/default/handlers/slow', 'PUT', {
    metadata: { name: 'slow', namespace: 'default' },
    type: 'pipe',
    command: `touch ${dir}/start.$MONITOR_BACKEND_NODE.$$; sleep 4; cat > ${dir}/done.$MONITOR_BACKEND_NODE.$$`,
  });
  assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
});

test.after(async () => {
  for (const b of backends.values()) await b.stop().catch(() => {});
  await natsSvc?.stop();
  await etcdSvc?.stop();
});

test('with no failure a job is handled exactly once', async () => {
  const r = await call(backends.get('pf-1')!, '/namespaces/default/events', 'POST', {
    entity: { metadata: { name: 'calm' } },
    check: { metadata: { name: 'c' }, status: 2, output: 'calm', handlers: ['slow'] },
  });
  assert.is(r.status, 201);
  await waitFor(() => (marks('done').some((m) => m.body.includes('"calm"')) ? true : undefined), {
    timeoutMs: 20000,
    what: 'handled',
  });
  // Past the ack wait, so a redelivery would have happened by now.
  await sleep(17000);
  assert.is(marks('done').filter((m) => m.body.includes('"calm"')).length, 1);
  assert.is(marks('start').length, 1);
});

test('orderly stop (SIGTERM) of the node running a handler: the job is handed back and the other node runs it', async () => {
  const before = new Set(readdirSync(dir));
  const r = await call(backends.get('pf-1')!, '/namespaces/default/events', 'POST', {
    entity: { metadata: { name: 'stopped' } },
    check: { metadata: { name: 'c' }, status: 2, output: 'stopped', handlers: ['slow'] },
  });
  assert.is(r.status, 201);
  const mark = await waitFor(() => readdirSync(dir).find((f) => f.startsWith('start.') && !before.has(f)), {
    timeoutMs: 20000,
    what: 'the handler started',
  });
  const victim = mark.split('.')[1]!;
  const old = backends.get(victim)!;
  // The stop's grace (2 s) is shorter than the handler (4 s): the handler is killed, not finished.
  await old.stop();
  try {
    const survivor = [...backends.keys()].find((n) => n !== victim)!;
    const done = await waitFor(
      () => marks('done').find((m) => m.node === survivor && m.body.includes('"stopped"')),
      // A job acked at the stop would never come back; one handed back runs within seconds.
      { timeoutMs: 12000, what: `the job handed back and run by ${survivor}` },
    );
    assert.is(JSON.parse(done.body).check.output, 'stopped');
    assert.not.ok(
      marks('done').some((m) => m.node === victim && m.body.includes('"stopped"')),
      'the stopped node did not finish it',
    );
  } finally {
    // The next test kills one of two running nodes.
    backends.set(victim, await startBackend(old.options));
  }
});

test('SIGKILL of the node running a handler: the other node runs the job', async () => {
  const before = new Set(readdirSync(dir));
  const r = await call(backends.get('pf-2')!, '/namespaces/default/events', 'POST', {
    entity: { metadata: { name: 'stormy' } },
    check: { metadata: { name: 'c' }, status: 2, output: 'stormy', handlers: ['slow'] },
  });
  assert.is(r.status, 201);
  const mark = await waitFor(() => readdirSync(dir).find((f) => f.startsWith('start.') && !before.has(f)), {
    timeoutMs: 20000,
    what: 'the handler started',
  });
  const victim = mark.split('.')[1]!;
  await backends.get(victim)!.kill('SIGKILL');
  backends.delete(victim);
  const survivor = [...backends.keys()][0]!;
  const done = await waitFor(
    () => marks('done').find((m) => m.node === survivor && m.body.includes('"stormy"')),
    { timeoutMs: 45000, what: `the job redone by ${survivor}` },
  );
  const event = JSON.parse(done.body);
  assert.is(event.check.output, 'stormy');
  assert.is(event.entity.metadata.name, 'stormy');
});

test.run();
