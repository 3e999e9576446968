// Embedded etcd and nats-server with real processes: start, readiness, port clashes, restarts, and
// that no child outlives its backend. Never uses the default ports, so it runs beside a dev backend.
//   node --import tsx test/integration/embedded.test.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { connect } from 'nats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, type Logger } from '../../lib/log.ts';
import {
  checkPortsFree,
  claimStateDir,
  hostPortOfUrl,
  parseHostPort,
  PortInUseError,
  resolveBinary,
  startEmbeddedEtcd,
  startEmbeddedNats,
  Supervisor,
  type EmbeddedService,
} from '../../lib/embedded/index.ts';
import { natsGreets } from '../../lib/embedded/nats.ts';
import { isAlive } from '../../lib/embedded/proc.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'embedded-supervisor.ts');

// Everything a test starts is also registered here, so test.after cleans up after a failed assertion.
const tmpDirs: string[] = [];
const services: EmbeddedService[] = [];
const supervisors: Supervisor[] = [];
const pids: number[] = [];
const servers: Server[] = [];
const logLines: string[] = [];

function quietLog(): Logger {
  return createLogger('warn', { test: 'embedded' }, (line) => {
    logLines.push(line);
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-embedded-'));
  tmpDirs.push(dir);
  return dir;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function occupy(port: number): Promise<Server> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', () => r()));
  return s;
}

async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Pids of guardian shells watching `pid`. */
function guardiansOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes(`kill -TERM ${pid} `) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

function spawnSleeper(marker: string): ChildProcess {
  const child = spawn('sleep', [marker], { detached: true, stdio: 'ignore' });
  if (child.pid !== undefined) pids.push(child.pid);
  return child;
}

test.after(async () => {
  for (const s of services) await s.stop().catch(() => {});
  for (const s of supervisors) await s.stop().catch(() => {});
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const s of servers) s.close();
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
});

test('resolveBinary finds nats-server in /usr/sbin even when PATH lacks it', () => {
  const saved = process.env.PATH;
  try {
    process.env.PATH = '/nonexistent';
    assert.ok(resolveBinary('nats-server')?.endsWith('/nats-server'));
    assert.ok(resolveBinary('etcd')?.endsWith('/etcd'));
  } finally {
    process.env.PATH = saved;
  }
});

test('host and port parsing', () => {
  assert.equal(hostPortOfUrl('http://127.0.0.1:2379'), { host: '127.0.0.1', port: 2379 });
  assert.equal(hostPortOfUrl('http://[::]:2380'), { host: '::', port: 2380 });
  assert.equal(parseHostPort('127.0.0.1:4222'), { host: '127.0.0.1', port: 4222 });
  assert.equal(parseHostPort('[::]:4222'), { host: '::', port: 4222 });
  assert.throws(() => parseHostPort('4222'));
});

test('etcd starts, answers /health and serves a client; stop() leaves no process', async () => {
  const stateDir = tempDir();
  const [client, peer] = [await freePort(), await freePort()];
  const etcd = await startEmbeddedEtcd({
    stateDir,
    node: 'test-node',
    log: quietLog(),
    listenClientUrls: [`http://0.0.0.0:${client}`],
    listenPeerUrls: [`http://127.0.0.1:${peer}`],
  });
  services.push(etcd);
  const pid = etcd.pid;
  assert.ok(pid !== undefined && isAlive(pid));
  assert.equal(etcd.endpoints, [`http://127.0.0.1:${client}`]);
  assert.equal(readFileSync(join(stateDir, 'etcd.pid'), 'utf8').trim(), String(pid));
  assert.equal(guardiansOf(pid).length, 1);
  const health = (await (await fetch(`${etcd.endpoints[0]}/health`)).json()) as { health: string };
  assert.is(health.health, 'true');
  const kv = new Etcd3({ hosts: etcd.endpoints });
  try {
    await kv.put('/monitor/test').value('ok');
    assert.is(await kv.get('/monitor/test').string(), 'ok');
  } finally {
    kv.close();
  }
  await etcd.stop();
  await etcd.stop(); // idempotent
  assert.not.ok(isAlive(pid), 'etcd still running after stop()');
  assert.equal(guardiansOf(pid), []);
  assert.not.ok(existsSync(join(stateDir, 'etcd.pid')));
  assert.ok(existsSync(join(stateDir, 'etcd', 'member')));
});

test('nats-server starts with JetStream and accepts a nats client; stop() leaves no process', async () => {
  const stateDir = tempDir();
  const port = await freePort();
  const nats = await startEmbeddedNats({
    stateDir,
    node: 'test-node',
    listen: `0.0.0.0:${port}`,
    log: quietLog(),
  });
  services.push(nats);
  const pid = nats.pid;
  assert.ok(pid !== undefined);
  assert.equal(nats.endpoints, [`nats://127.0.0.1:${port}`]);
  const nc = await connect({ servers: nats.endpoints });
  try {
    assert.is(nc.info?.max_payload, 8 * 1024 * 1024);
    const info = await (await nc.jetstreamManager()).getAccountInfo();
    assert.type(info.limits, 'object');
  } finally {
    await nc.close();
  }
  assert.ok(
    readFileSync(join(stateDir, 'nats', 'nats.conf'), 'utf8').includes(
      `store_dir: "${join(stateDir, 'nats')}"`,
    ),
  );
  await nats.stop();
  assert.not.ok(isAlive(pid!), 'nats-server still running after stop()');
  assert.equal(guardiansOf(pid!), []);
  assert.not.ok(existsSync(join(stateDir, 'nats-server.pid')));
});

test('a port in use gives a one-line error naming the flag', async () => {
  const busy = await freePort();
  await occupy(busy);
  const stateDir = tempDir();
  const natsErr = await startEmbeddedNats({
    stateDir,
    node: 'n',
    listen: `127.0.0.1:${busy}`,
    log: quietLog(),
  }).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.instance(natsErr, PortInUseError);
  assert.is(natsErr?.message, `port ${busy} on 127.0.0.1 is already in use; change --nats-listen`);

  const client = await freePort();
  const etcdErr = await startEmbeddedEtcd({
    stateDir,
    node: 'n',
    log: quietLog(),
    listenClientUrls: [`http://127.0.0.1:${client}`],
    listenPeerUrls: [`http://127.0.0.1:${busy}`],
  }).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.instance(etcdErr, PortInUseError);
  assert.is(etcdErr?.message, `port ${busy} on 127.0.0.1 is already in use; change --etcd-listen-peer-urls`);

  // A wildcard listen address clashes with a loopback listener too.
  const wildcardErr = await checkPortsFree([{ host: '[::]', port: busy, flag: 'api-port' }]).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.is(wildcardErr?.message, `port ${busy} on :: is already in use; change --api-port`);
  assert.not.ok(existsSync(join(stateDir, 'etcd')), 'etcd must not be spawned when a port is taken');
});

test('a child killed with SIGKILL is restarted', async () => {
  const stateDir = tempDir();
  const port = await freePort();
  const nats = await startEmbeddedNats({ stateDir, node: 'n', listen: `127.0.0.1:${port}`, log: quietLog() });
  services.push(nats);
  const first = nats.pid!;
  process.kill(first, 'SIGKILL');
  await waitFor('a new nats-server pid', () => nats.pid !== undefined && nats.pid !== first, 5_000);
  const second = nats.pid!;
  assert.equal(readFileSync(join(stateDir, 'nats-server.pid'), 'utf8').trim(), String(second));
  await waitFor('the restarted nats-server to greet', () => natsGreets('127.0.0.1', port), 5_000);
  const nc = await connect({ servers: nats.endpoints });
  await nc.close();
  await waitFor('one guardian of the new child', () => guardiansOf(second).length === 1, 2_000);
  assert.equal(guardiansOf(first), []);
  await nats.stop();
  assert.not.ok(isAlive(second));
});

test('a child that keeps dying is given up and reported through onFatal', async () => {
  const dir = tempDir();
  const sup = new Supervisor({
    name: 'crasher',
    command: 'sh',
    args: ['-c', 'echo starting; sleep 0.1; echo "boom: disk on fire" >&2; exit 3'],
    pidFile: join(dir, 'crasher.pid'),
    ready: async () => true,
    readyTimeoutMs: 2_000,
    log: quietLog(),
    matchCmdline: ['crasher-never-matches'],
    backoffMs: 20,
  });
  supervisors.push(sup);
  const fatal = new Promise<Error>((resolve) => sup.onFatal(resolve));
  await sup.start();
  const err = await Promise.race([
    fatal,
    sleep(10_000, undefined, { ref: false }).then(() => {
      throw new Error('onFatal was not called');
    }),
  ]);
  assert.match(err.message, /^embedded crasher exited 6 times within 60 s/);
  assert.match(err.message, /boom: disk on fire/);
  assert.not.match(err.message, /\n/);
  assert.is(sup.pid, undefined);
  assert.not.ok(existsSync(join(dir, 'crasher.pid')));
  await sup.stop();
});

test('the guardian kills the child when the supervising process is SIGKILLed', async () => {
  const dir = tempDir();
  const marker = `1000.${process.pid}1`;
  const pidFile = join(dir, 'sleep.pid');
  const host = spawn(process.execPath, ['--import', 'tsx', FIXTURE, pidFile, marker], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const lines = createInterface({ input: host.stdout! });
    const first = await Promise.race([
      new Promise<string>((resolve) => lines.once('line', resolve)),
      sleep(15_000, undefined, { ref: false }).then(() => {
        throw new Error('fixture did not report its child');
      }),
    ]);
    const { pid } = JSON.parse(first) as { pid: number };
    pids.push(pid);
    assert.ok(isAlive(pid));
    assert.equal(readFileSync(pidFile, 'utf8').trim(), String(pid));
    assert.equal(guardiansOf(pid).length, 1);
    host.kill('SIGKILL');
    await waitFor('the guardian to kill the orphaned child', () => !isAlive(pid), 4_000);
  } finally {
    host.kill('SIGKILL');
  }
});

test('start() kills a stale child named by the pid file, and only a matching one', async () => {
  const dir = tempDir();
  const pidFile = join(dir, 'sleep.pid');
  const marker = `1000.${process.pid}2`;
  const stale = spawnSleeper(marker);
  const unrelated = spawnSleeper(`1000.${process.pid}3`);
  await waitFor(
    'the sleepers to exec',
    () => readFileSync(`/proc/${stale.pid}/cmdline`, 'utf8').includes(marker),
    2_000,
  );

  // The pid file names a live process whose command line does not match: left alone.
  writeFileSync(pidFile, `${unrelated.pid}\n`);
  const opts = {
    name: 'sleep',
    command: 'sleep',
    args: [marker],
    pidFile,
    ready: async () => true,
    readyTimeoutMs: 2_000,
    log: quietLog(),
    matchCmdline: ['sleep', marker],
  };
  const a = new Supervisor(opts);
  supervisors.push(a);
  await a.start();
  assert.ok(isAlive(unrelated.pid!), 'an unrelated process was killed');
  await a.stop();

  // The pid file names a leftover of ours: killed before the new child starts.
  writeFileSync(pidFile, `${stale.pid}\n`);
  const b = new Supervisor(opts);
  supervisors.push(b);
  await b.start();
  assert.not.ok(isAlive(stale.pid!), 'the stale child survived');
  assert.ok(b.pid !== undefined && b.pid !== stale.pid && isAlive(b.pid));
  await b.stop();
});

test('claimStateDir refuses a state dir held by another live backend', async () => {
  const dir = join(tempDir(), 'state');
  const release = await claimStateDir(dir, quietLog());
  assert.equal(readFileSync(join(dir, 'backend.pid'), 'utf8').trim(), String(process.pid));
  release();
  assert.not.ok(existsSync(join(dir, 'backend.pid')));

  // `; :` keeps sh from exec'ing sleep, so $0 stays in the command line.
  const other = spawn('sh', ['-c', 'sleep 1000; :', 'monitor-backend'], { detached: true, stdio: 'ignore' });
  pids.push(other.pid!);
  try {
    await waitFor(
      'the fake backend to start',
      () => readFileSync(`/proc/${other.pid}/cmdline`, 'utf8').includes('monitor-backend'),
      2_000,
    );
    writeFileSync(join(dir, 'backend.pid'), `${other.pid}\n`);
    const err = await claimStateDir(dir, quietLog()).then(
      () => undefined,
      (e: Error) => e,
    );
    assert.is(err?.message, `another monitor-backend (pid ${other.pid}) is using state dir ${dir}`);
  } finally {
    try {
      process.kill(-other.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  // A dead backend's pid file is taken over.
  await waitFor('the fake backend to die', () => !isAlive(other.pid!), 2_000);
  const again = await claimStateDir(dir, quietLog());
  again();
});

test.run();
