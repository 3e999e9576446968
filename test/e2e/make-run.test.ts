// suite-timeout: 180
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { freePorts, getJson, Proc, tempDir, waitFor } from '../harness/index.ts';

// `make run`'s script (deploy/local/run.sh) on free ports, one variable each: the backend, its
// embedded etcd and NATS and the agent listen where they are told; stopping the agent leaves the
// backend up and its keepalive alert appears; stopping the script stops everything.

const ROOT = join(import.meta.dirname, '..', '..');
const STATE = tempDir('make-run');
const AGENT = `make-run-${randomUUID().slice(0, 8)}`;
const NAMES = [
  'API_PORT',
  'AGENT_PORT',
  'LEGACY_API_PORT',
  'ETCD_CLIENT_PORT',
  'ETCD_PEER_PORT',
  'NATS_PORT',
  'AGENT_API_PORT',
  'AGENT_SOCKET_PORT',
  'STATSD_PORT',
] as const;
let port: Record<(typeof NAMES)[number], number>;
let run: Proc | undefined;
let agentPid = 0;

test.after(async () => {
  await run?.stop(20_000);
  try {
    if (agentPid) process.kill(agentPid, 'SIGKILL');
  } catch {
    /* gone already */
  }
});

const api = (path: string) =>
  getJson(`http://127.0.0.1:${port.API_PORT}${path}`, {
    headers: { Authorization: `Key ${readFileSync(join(STATE, 'admin.api-key'), 'utf8')}` },
  });

const accepts = (p: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(p, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

test('every port is the variable given; the agent registers', async () => {
  const free = await freePorts(NAMES.length);
  port = Object.fromEntries(NAMES.map((n, i) => [n, free[i]!])) as typeof port;
  run = Proc.start('make-run', join(ROOT, 'deploy/local/run.sh'), [], {
    env: {
      ...Object.fromEntries(NAMES.map((n) => [n, String(port[n])])),
      STATE_DIR: STATE,
      AGENT_NAME: AGENT,
      AGENT_ARGS: '--keepalive-interval 1 --keepalive-warning-timeout 5',
    },
  });
  const entity = await waitFor(
    async () => {
      if (!run!.running) throw new Error(`run.sh exited:\n${run!.tail(30)}`);
      const r = await api(`/api/core/v2/namespaces/default/entities/${AGENT}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 90_000, what: 'the agent registered' },
  );
  assert.is(entity.metadata.name, AGENT);
  const etcd = await getJson(`http://127.0.0.1:${port.ETCD_CLIENT_PORT}/version`);
  assert.is(etcd.status, 200);
  assert.ok(await accepts(port.ETCD_PEER_PORT), 'etcd peer port');
  assert.ok(await accepts(port.NATS_PORT), 'NATS port');
  assert.ok(await accepts(port.AGENT_PORT), 'agent WebSocket port');
  assert.is((await getJson(`http://127.0.0.1:${port.LEGACY_API_PORT}/info`)).status, 200);
  assert.ok(await accepts(port.AGENT_API_PORT), 'agent API port');
  assert.ok(await accepts(port.AGENT_SOCKET_PORT), 'agent socket port');
  agentPid = Number(readFileSync(join(STATE, 'agent.pid'), 'utf8'));
  assert.ok(agentPid > 0);
});

test('the agent stopped: the backend stays and raises its keepalive alert', async () => {
  process.kill(agentPid, 'SIGTERM');
  await waitFor(
    () => run!.lines().some((l) => l.includes('monitor-agent stopped; the backend keeps running')),
    {
      timeoutMs: 30_000,
      what: 'the script to say the agent stopped',
    },
  );
  const alert = await waitFor(
    async () => {
      const r = await api(`/api/core/v2/namespaces/default/events/${AGENT}/keepalive`);
      return r.status === 200 && r.body.check.status !== 0 ? r.body : undefined;
    },
    { timeoutMs: 60_000, what: 'the keepalive alert' },
  );
  assert.ok(alert.check.status > 0);
  assert.ok(run!.running, 'the script still runs');
  assert.is((await getJson(`http://127.0.0.1:${port.API_PORT}/health`)).status, 200);
});

test('stopping the script stops the backend', async () => {
  await run!.stop(30_000);
  assert.not.ok(await accepts(port.API_PORT), 'the API port is closed');
  assert.not.ok(await accepts(port.ETCD_CLIENT_PORT), 'the embedded etcd is gone');
});

test.run();
