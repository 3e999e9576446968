// suite-timeout: 360
// suite-exclusive: eleven processes (3 etcd, 3 NATS, 3 backends, HAProxy, an agent) on two cores
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { freePorts, getJson, tempDir, waitFor } from '../harness/index.ts';

// `make cluster`, `make cluster-status`, `make cluster-down` (docs/operations-local-cluster.md) on free
// ports and in a temp folder: eleven processes in the background (3 etcd, 3 nats-server, 3 backends,
// haproxy, an agent), the agent registered through HAProxy, three members, every stream and KV bucket
// with three replicas; then down leaves no process and no port behind, and a second down is harmless.

const DIR = path.join(tempDir('make-cluster'), 'cluster');
const AGENT = `make-cluster-${randomUUID().slice(0, 8)}`;
const NAMES = [
  ...['etcd-1', 'etcd-2', 'etcd-3', 'nats-1', 'nats-2', 'nats-3'],
  ...['backend-1', 'backend-2', 'backend-3', 'haproxy', 'agent'],
];
let env: Record<string, string> = {};
let ports: Record<string, number[]> = {};
let key = '';
/** Every pid any pid file held, read while the cluster runs: the after hook kills what is left. */
const pids = new Set<number>();

interface Run {
  code: number | null;
  out: string;
}

/** `make <target>` in the repository, with the cluster's environment; output (stdout + stderr) kept. */
function make(target: string, timeoutMs = 300_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('make', ['--no-print-directory', target], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const keep = (d: Buffer) => {
      out += d.toString('utf8');
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (process.env.MONITOR_TEST_VERBOSE === '1') process.stderr.write(`--- make ${target}\n${out}`);
      resolve({ code, out });
    });
  });
}

function readPids(): number[] {
  const dir = path.join(DIR, 'pids');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((f) => Number.parseInt(fs.readFileSync(path.join(dir, f), 'utf8'), 10))
    .filter((p) => Number.isInteger(p) && p > 1);
}

/** Alive and not a zombie (an exited child of init waits a moment to be reaped). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host: '127.0.0.1', port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

const url = (port: number | undefined) => `http://127.0.0.1:${port}`;

test.before(async () => {
  const [api, agent, stats, agentApi, agentSocket, agentStatsd, legacy] = await freePorts(7);
  ports = {
    CLUSTER_BACKEND_API_PORTS: await freePorts(3),
    CLUSTER_BACKEND_AGENT_PORTS: await freePorts(3),
    CLUSTER_ETCD_CLIENT_PORTS: await freePorts(3),
    CLUSTER_ETCD_PEER_PORTS: await freePorts(3),
    CLUSTER_NATS_PORTS: await freePorts(3),
    CLUSTER_NATS_CLUSTER_PORTS: await freePorts(3),
    CLUSTER_NATS_HTTP_PORTS: await freePorts(3),
    CLUSTER_BACKEND_LEGACY_PORTS: await freePorts(3),
    CLUSTER_API_PORT: [api!],
    CLUSTER_LEGACY_PORT: [legacy!],
    CLUSTER_AGENT_PORT: [agent!],
    CLUSTER_STATS_PORT: [stats!],
    CLUSTER_AGENT_API_PORT: [agentApi!],
    CLUSTER_AGENT_SOCKET_PORT: [agentSocket!],
    CLUSTER_AGENT_STATSD_PORT: [agentStatsd!],
  };
  env = { CLUSTER_DIR: DIR, CLUSTER_AGENT_NAME: AGENT, LOG_LEVEL: 'info' };
  for (const [k, v] of Object.entries(ports)) env[k] = v.join(',');
});

test.after(async () => {
  if (fs.existsSync(path.join(DIR, 'cluster.json'))) await make('cluster-down', 120_000);
  for (const pid of [...pids, ...readPids()]) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

test('make cluster starts everything and prints the URLs, the key and the commands', async () => {
  const r = await make('cluster');
  for (const pid of readPids()) pids.add(pid);
  assert.is(r.code, 0, r.out);
  const p = ports;
  assert.ok(r.out.includes(`REST API (haproxy)      ${url(p.CLUSTER_API_PORT![0])}`), r.out);
  assert.ok(r.out.includes(`ws://127.0.0.1:${p.CLUSTER_AGENT_PORT![0]}`), r.out);
  for (const port of p.CLUSTER_BACKEND_API_PORTS!) assert.ok(r.out.includes(url(port)), r.out);
  assert.ok(r.out.includes(`${url(p.CLUSTER_STATS_PORT![0])}/stats`), r.out);
  assert.ok(r.out.includes(`legacy API (haproxy)    ${url(p.CLUSTER_LEGACY_PORT![0])}`), r.out);
  for (const port of p.CLUSTER_BACKEND_LEGACY_PORTS!) assert.ok(r.out.includes(url(port)), r.out);
  assert.ok(r.out.includes('make cluster-status') && r.out.includes('make cluster-down'), r.out);
  const m = /administrator +admin \/ (\S+), API key ([0-9a-f-]{36})/.exec(r.out);
  assert.ok(m, r.out);
  key = m![2]!;
  assert.is(fs.readFileSync(path.join(DIR, 'admin.api-key'), 'utf8').trim(), key);
  assert.is(pids.size, 11, 'one pid file per process');
  for (const name of NAMES) {
    assert.ok(fs.existsSync(path.join(DIR, 'logs', `${name}.log`)), `logs/${name}.log`);
    assert.ok(fs.existsSync(path.join(DIR, 'pids', `${name}.pid`)), `pids/${name}.pid`);
  }
});

test('the agent is registered, read through HAProxy with the printed key', async () => {
  const entity = `${url(ports.CLUSTER_API_PORT![0])}/api/core/v2/namespaces/default/entities/${AGENT}`;
  const res = await getJson(entity, { headers: { Authorization: `Key ${key}` } });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.metadata.name, AGENT);
  assert.is(res.body.entity_class, 'agent');
  const anonymous = await getJson(entity);
  assert.is(anonymous.status, 401);
});

test('every backend reports three members, and together they own the 256 shards', async () => {
  await waitFor(
    async () => {
      const reports = await Promise.all(
        ports.CLUSTER_BACKEND_API_PORTS!.map(async (p) => (await getJson(`${url(p)}/health`)).body),
      );
      for (const r of reports) assert.equal([...r.members].sort(), ['backend-1', 'backend-2', 'backend-3']);
      const owned = reports.reduce((n, r) => n + r.shards.owned, 0);
      return owned === 256 ? owned : undefined;
    },
    { timeoutMs: 60_000, what: 'the shards to be owned once each' },
  );
});

test('the legacy API answers through HAProxy: GET /info 200 with JSON, GET /health 204', async () => {
  const legacy = url(ports.CLUSTER_LEGACY_PORT![0]);
  // HAProxy sends a node traffic once two checks of its /ready passed, as for the REST frontend.
  const info = await waitFor(
    async () => {
      const res = await getJson(`${legacy}/info`);
      return res.status === 503 ? undefined : res;
    },
    { timeoutMs: 15_000, what: 'HAProxy to have a legacy server up' },
  );
  assert.is(info.status, 200, JSON.stringify(info.body));
  assert.type(info.body.sensu.version, 'string');
  const health = await fetch(`${legacy}/health`);
  assert.is(health.status, 204);
  assert.is(await health.text(), '');
});

test('every JetStream stream and KV bucket has three replicas', async () => {
  const monitor = url(ports.CLUSTER_NATS_HTTP_PORTS![0]);
  const jsz = (await getJson(`${monitor}/jsz?accounts=true&streams=true&config=true`)).body;
  const streams = jsz.account_details.flatMap((a: any) => a.stream_detail ?? []);
  const names = streams.map((s: any) => s.name);
  assert.ok(names.includes('KV_monitor_entities'), names.join(', '));
  for (const s of streams) {
    assert.is(s.config.num_replicas, 3, s.name);
    assert.is(s.cluster.replicas.length, 2, `${s.name}: a leader and two followers`);
  }
  assert.is(jsz.meta_cluster.cluster_size, 3);
});

test('make cluster-status lists eleven processes alive, the members, etcd, NATS and HAProxy (legacy API too)', async () => {
  const r = await make('cluster-status', 60_000);
  assert.is(r.code, 0, r.out);
  for (const name of NAMES) assert.match(r.out, new RegExp(`^  ${name} +\\d+ +yes `, 'm'));
  assert.ok(r.out.includes('11 of 11 processes alive'), r.out);
  assert.is(r.out.match(/members: backend-1, backend-2, backend-3/g)?.length, 3, r.out);
  assert.is(r.out.match(/^ {2}etcd-\d +leader /gm)?.length, 1, r.out);
  assert.match(r.out, /routes 2 \(nats-2, nats-3\), JetStream meta leader nats-\d/);
  assert.match(r.out, /KV_monitor_entities +replicas 3/);
  assert.is(r.out.match(/be_(api|agents|legacy)\/backend-\d +UP /g)?.length, 9, r.out);
  assert.is(r.out.match(/, legacy API ok$/gm)?.length, 3, r.out);
});

test('make cluster again while it runs says so and exits 0', async () => {
  const r = await make('cluster', 60_000);
  assert.is(r.code, 0, r.out);
  assert.ok(r.out.includes('is already running'), r.out);
});

test('make cluster-down stops every process and frees every port; a second one is harmless', async () => {
  const before = readPids();
  assert.is(before.length, 11);
  const r = await make('cluster-down', 180_000);
  assert.is(r.code, 0, r.out);
  for (const name of NAMES) assert.match(r.out, new RegExp(`^  ${name} +pid \\d+ (stopped|killed)`, 'm'));
  await waitFor(() => before.every((pid) => !alive(pid)), {
    timeoutMs: 10_000,
    what: 'every pid to be gone',
  });
  assert.equal(readPids(), [], 'pid files removed');
  const all = Object.values(ports).flat();
  const taken: number[] = [];
  for (const port of all) if (!(await portFree(port))) taken.push(port);
  assert.equal(taken, [], 'ports still taken');
  assert.ok(fs.existsSync(path.join(DIR, 'etcd-1')), 'data kept');

  const again = await make('cluster-down', 60_000);
  assert.is(again.code, 0, again.out);
  assert.is(again.out.match(/ not running$/gm)?.length, 11, again.out);
});

test('make cluster-wipe removes the folder', async () => {
  const r = await make('cluster-wipe', 60_000);
  assert.is(r.code, 0, r.out);
  assert.not.ok(fs.existsSync(DIR));
});

test.run();
