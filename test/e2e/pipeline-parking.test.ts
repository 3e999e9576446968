// suite-timeout: 300
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { streams } from '../../proto/names.ts';
import { coreApi } from '../harness/api.ts';
import {
  startBackend,
  startEtcd,
  startNats,
  tempDir,
  waitFor,
  type Backend,
  type EtcdServer,
  type NatsServer,
} from '../harness/index.ts';

// A poisoned pipeline job: its handler SIGKILLs the backend that runs it, every time. Without a
// limit JetStream would hand it to each (re)started node forever. After five starts it is parked on
// MONITOR_PIPELINE_DEAD, counted in /metrics, logged once without the event's payload, and the
// jobs behind it run.

let etcdSvc: EtcdServer;
let natsSvc: NatsServer;
let backend: Backend;
let dir: string;
let nc: NatsConnection | undefined;
const api = coreApi(() => backend);

test.before(async () => {
  etcdSvc = await startEtcd();
  natsSvc = await startNats();
  dir = join(tempDir('pipeline-parking'), 'out');
  mkdirSync(dir, { recursive: true });
  backend = await startBackend({ name: 'park-1', etcdUrl: etcdSvc.url, natsUrl: natsSvc.url });
  for (const [name, command] of [
    // The pause lets the API answer the event's POST before the node dies.
    ['poison', `touch ${dir}/start.$$; sleep 1; kill -9 $PPID`],
    ['good', `cat > ${dir}/good.$$`],
  ]) {
    const r = await api(`/namespaces/default/handlers/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      type: 'pipe',
      command,
    });
    assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
  }
});

test.after(async () => {
  await nc?.close();
  await backend?.stop().catch(() => {});
  await natsSvc?.stop();
  await etcdSvc?.stop();
});

const files = (prefix: string) => readdirSync(dir).filter((f) => f.startsWith(prefix));

test('a job that kills its node every time is parked after five starts and the queue moves on', async () => {
  const r = await api('/namespaces/default/events', 'POST', {
    entity: { metadata: { name: 'poisoned' } },
    check: { metadata: { name: 'c' }, status: 2, output: 'PAYLOAD-MARK', handlers: ['poison'] },
  });
  assert.is(r.status, 201);

  // Each start kills the node; a new one takes the job over after the ack wait (15 s).
  let parked: Record<string, any> | undefined;
  for (let restarts = 0; !parked; restarts++) {
    assert.ok(restarts <= 6, `still not parked after ${restarts} restarts`);
    const exit = await Promise.race([
      backend.proc.exited,
      waitFor(() => backend.logs().find((l) => l.msg === 'pipeline job parked: it never finished'), {
        timeoutMs: 40_000,
        what: 'the node killed or the job parked',
      }),
    ]);
    if ('msg' in exit) parked = exit;
    else backend = await startBackend({ ...backend.options, init: false });
  }
  assert.is(files('start.').length, 5, 'the handler started five times');
  assert.is(parked.level, 'warn');
  assert.is(parked.entity, 'poisoned');
  assert.is(parked.check, 'c');
  assert.is(parked.attempts, 5);
  assert.ok(parked.deliveries >= 6, `deliveries ${parked.deliveries}`);
  assert.not.ok(JSON.stringify(backend.logs()).includes('PAYLOAD-MARK'), 'no payload in the logs');
  assert.is(backend.logs().filter((l) => l.msg === parked!.msg).length, 1, 'logged once');

  const metrics = await fetch(`${backend.apiUrl}/metrics`).then((res) => res.text());
  assert.match(metrics, /^monitor_pipeline_jobs_parked_total 1$/m);

  // The job as it was queued waits on the dead-letter stream.
  nc = await connect({ servers: natsSvc.url });
  const jsm = await nc.jetstreamManager();
  const dead = await jsm.streams.getMessage(streams.pipelineDead, { seq: 1 });
  assert.is(JSON.parse(new TextDecoder().decode(dead.data)).event.check.output, 'PAYLOAD-MARK');

  // The queue moves on: the next job runs, and the parked one is not started again.
  const next = await api('/namespaces/default/events', 'POST', {
    entity: { metadata: { name: 'healthy' } },
    check: { metadata: { name: 'c' }, status: 2, output: 'fine', handlers: ['good'] },
  });
  assert.is(next.status, 201);
  await waitFor(() => (files('good.').length ? true : undefined), { timeoutMs: 15_000, what: 'handled' });
  assert.is(files('start.').length, 5);
  assert.ok(backend.proc.running, 'the node runs on');
});

test.run();
