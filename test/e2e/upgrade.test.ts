// suite-timeout: 300
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Etcd3, type Lease } from 'etcd3';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  AGENT_BIN,
  BACKEND_BIN,
  freePort,
  Proc,
  startBackend,
  startEtcd,
  startNats,
  tempDir,
  type Backend,
  type EtcdServer,
  type NatsServer,
} from '../harness/index.ts';
import { configKeys, etcdKeys } from '../../proto/names.ts';
import { LATEST, MIGRATIONS } from '../../gateway/node/upgrade/migrations.ts';

// The upgrade notes of the spec (section 9, docs/operations.md#upgrades), each a test, with real
// etcd, nats-server and backends: a fresh cluster needs no upgrade; a datastore written before
// versions existed is served until `monitor-backend upgrade` runs once, which asks y/n on a
// terminal (and needs --skip-confirm without one); a check in a namespace that does not exist
// refuses it (release 6.2.0) and the spec's remedy through the API lets it through; a second run
// is harmless; a newer datastore is refused; two runs at once apply a migration once; both
// programs print their version the same way.

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

interface Cluster {
  etcd: EtcdServer;
  nats: NatsServer;
  client: Etcd3;
}

const clusters: Cluster[] = [];
const backends: Backend[] = [];
const leases: Lease[] = [];

async function newCluster(): Promise<Cluster> {
  const [etcd, nats] = await Promise.all([startEtcd(), startNats()]);
  const c = { etcd, nats, client: new Etcd3({ hosts: [etcd.url] }) };
  clusters.push(c);
  return c;
}

async function backendOn(c: Cluster, name: string): Promise<Backend> {
  const b = await startBackend({ name, etcdUrl: c.etcd.url, natsUrl: c.nats.url, logLevel: 'info' });
  backends.push(b);
  return b;
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `monitor-backend <args>` without any MONITOR_BACKEND_* of ours. Its stdin is not a terminal,
 * unless `answer` is given: then it runs on a pseudo-terminal (`script`), and `answer` is typed
 * once the y/n prompt shows (stdout and stderr both arrive in stdout then).
 */
function cli(args: string[], answer?: string): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('MONITOR_BACKEND_')) env[k] = v;
  const child =
    answer === undefined
      ? spawn(BACKEND_BIN, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('script', ['-qec', [BACKEND_BIN, ...args].map(quote).join(' '), '/dev/null'], {
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let typed = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (answer !== undefined && !typed && stdout.includes('[y/n]')) {
        typed = true;
        child.stdin!.end(`${answer}\n`);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
/** The lines that are not JSON log lines. */
const messageLines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('{'));
const logLines = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);

const upgradeArgs = (c: Cluster, ...extra: string[]) => [
  'upgrade',
  '--etcd-client-urls',
  c.etcd.url,
  ...extra,
];

/** Every key under /monitor/ that no lease holds (a running node's member and shard keys are leased). */
async function durableKeys(c: Cluster): Promise<Array<[string, string, string]>> {
  const res = await c.client.getAll().prefix(etcdKeys.root).exec();
  return res.kvs
    .filter((kv) => String(kv.lease) === '0')
    .map((kv) => [kv.key.toString(), kv.value.toString(), String(kv.mod_revision)]);
}

const versionKey = async (c: Cluster) => {
  const text = await c.client.get(etcdKeys.datastoreVersion).string();
  return text === null ? undefined : (JSON.parse(text) as unknown);
};

/** A check as an earlier version stored it: no namespace in its metadata, a field no longer known. */
const OLDER_CHECK = {
  metadata: { name: 'older', created_by: 'admin' },
  command: 'true',
  interval: 60,
  retired: 1,
};

/** Makes the datastore one written before versions existed: no version key, an older check. */
async function makeUnversioned(c: Cluster): Promise<void> {
  await c.client.delete().key(etcdKeys.datastoreVersion);
  await c.client.put(configKeys.namespaced('checks', 'default', 'older')).value(JSON.stringify(OLDER_CHECK));
}

test.after(async () => {
  for (const l of leases) await l.revoke().catch(() => {});
  for (const b of backends) await b.stop().catch(() => {});
  for (const c of clusters) {
    c.client.close();
    await Promise.all([c.etcd.stop(), c.nats.stop()]);
  }
});

test('version lines: monitor-backend version X and monitor-agent version X, X the package version', async () => {
  const [backend, agent] = await Promise.all([
    cli(['version']),
    new Promise<string>((resolve) => {
      const p = spawn(AGENT_BIN, ['version'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      p.once('close', () => resolve(out));
    }),
  ]);
  assert.is(backend.stdout, `monitor-backend version ${VERSION}\n`);
  assert.is(agent, `monitor-agent version ${VERSION}\n`);
});

test('upgrade without --skip-confirm when stdin is not a terminal: one line naming the flag, exit 2', async () => {
  // No etcd answers there: the refusal comes before any connection.
  const r = await cli(['upgrade', '--etcd-client-urls', `http://127.0.0.1:${await freePort()}`]);
  assert.is(r.code, 2, show(r));
  assert.equal(messageLines(r.stderr), [
    'monitor-backend: upgrade asks for confirmation, and stdin is not a terminal: add --skip-confirm',
  ]);
  assert.is(r.stdout, '');
});

test('a fresh cluster needs no upgrade: its first start writes the latest version, and upgrade has nothing to do', async () => {
  const c = await newCluster();
  const b = await backendOn(c, 'fresh');
  assert.equal(await versionKey(c), { version: LATEST, by: VERSION });
  const health = await b.health();
  assert.equal(health.body.datastore, { version: LATEST, latest: LATEST, pending: [] });
  const r = await cli(upgradeArgs(c, '--skip-confirm'));
  assert.is(r.code, 0, show(r));
  assert.is(r.stdout, `the datastore is already at version ${LATEST}: nothing to upgrade\n`);
  await b.stop();
});

// One datastore for the tests below, in order: written by a backend, then made unversioned.
let old: Cluster;
let oldBackend: Backend;

test('a check in a namespace that does not exist refuses the upgrade: a log error names both, exit 1, nothing changed', async () => {
  old = await newCluster();
  await (await backendOn(old, 'old-1')).stop();
  await makeUnversioned(old);
  // Left by an earlier version, which did not refuse to delete a namespace holding checks.
  await old.client
    .put(configKeys.namespaced('checks', 'gone', 'orphan'))
    .value(
      JSON.stringify({ metadata: { name: 'orphan', namespace: 'gone' }, command: 'true', interval: 10 }),
    );
  const before = await durableKeys(old);
  const r = await cli(upgradeArgs(old, '--skip-confirm'));
  assert.is(r.code, 1, show(r));
  const lines = messageLines(r.stderr);
  assert.is(lines.length, 1, show(r));
  assert.match(
    lines[0]!,
    /^monitor-backend: upgrade refused by migration 1 .*check "orphan" references namespace "gone", which does not exist/,
  );
  assert.match(lines[0]!, /the datastore stays at version 0$/);
  const errors = logLines(r.stderr).filter((l) => l.level === 'error');
  assert.is(errors.length, 1, show(r));
  assert.is(errors[0]!.check, 'orphan');
  assert.is(errors[0]!.namespace, 'gone');
  assert.equal(await durableKeys(old), before, 'the datastore is unchanged');
  assert.is(await versionKey(old), undefined);
});

test('a datastore from before versions: the backend starts, warns to run upgrade, reports it in /health, stays ready', async () => {
  oldBackend = await backendOn(old, 'old-2');
  const warning = oldBackend.logs().find((l) => l.level === 'warn' && l.datastore_version === 0);
  assert.ok(warning, 'a warning about the datastore version');
  assert.match(warning!.msg, /run "monitor-backend upgrade" once/);
  const health = await oldBackend.health();
  assert.equal(health.body.datastore, {
    version: 0,
    latest: LATEST,
    pending: MIGRATIONS.map((m) => m.title),
  });
  assert.is((await oldBackend.ready()).status, 200, 'ready: the cluster serves until the upgrade');
  assert.is((await oldBackend.get('/api/core/v2/namespaces/default/checks/older')).status, 200);
  assert.is(await versionKey(old), undefined, 'a start does not write the version of an existing datastore');
});

test('on a terminal upgrade asks y/n: n changes nothing', async () => {
  const before = await durableKeys(old);
  const r = await cli(upgradeArgs(old), 'n');
  assert.is(r.code, 1, show(r));
  assert.match(r.stdout, /The datastore is at version 0\. Migrations to apply:/);
  assert.match(r.stdout, new RegExp(`Upgrade the datastore to version ${LATEST}\\? \\[y/n\\]`));
  assert.match(r.stdout, /monitor-backend: upgrade not confirmed: nothing was changed/);
  assert.equal(await durableKeys(old), before);
});

test('after the remedy of release 6.2.0 (recreate the namespace, delete the check, delete the namespace), y upgrades', async () => {
  const api = (path: string, method: string, body?: unknown) =>
    oldBackend.get(`/api/core/v2${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
  assert.is((await api('/namespaces/gone', 'PUT', { name: 'gone' })).status, 201, 'recreate the namespace');
  assert.is((await api('/namespaces/gone/checks/orphan', 'DELETE')).status, 204, 'delete the check');
  assert.is((await api('/namespaces/gone', 'DELETE')).status, 204, 'delete the namespace');
  const r = await cli(upgradeArgs(old), 'y');
  assert.is(r.code, 0, show(r));
  assert.match(r.stdout, new RegExp(`datastore upgraded from version 0 to ${LATEST}`));
  assert.equal(await versionKey(old), { version: LATEST, by: VERSION });
  const stored = JSON.parse(
    (await old.client.get(configKeys.namespaced('checks', 'default', 'older')).string())!,
  );
  assert.equal(stored, {
    metadata: { name: 'older', created_by: 'admin', namespace: 'default' },
    command: 'true',
    interval: 60,
  });
  const health = await oldBackend.health();
  assert.equal(health.body.datastore, { version: LATEST, latest: LATEST, pending: [] });
});

test('running upgrade again is harmless: it says the datastore is already at the version, and writes nothing', async () => {
  const before = await durableKeys(old);
  const r = await cli(upgradeArgs(old, '--skip-confirm'));
  assert.is(r.code, 0, show(r));
  assert.is(r.stdout, `the datastore is already at version ${LATEST}: nothing to upgrade\n`);
  assert.equal(await durableKeys(old), before);
  await oldBackend.stop();
});

test('a newer datastore: a backend refuses to start naming the version to run (exit 1, one line, a log error); upgrade and init refuse it', async () => {
  const c = await newCluster();
  await c.client.put(etcdKeys.datastoreVersion).value(JSON.stringify({ version: LATEST + 1, by: '99.1.0' }));
  const expected = `the datastore is at version ${LATEST + 1} (written by monitor-backend 99.1.0) and this monitor-backend ${VERSION} knows versions up to ${LATEST}: run monitor-backend 99.1.0 or later`;
  const proc = Proc.start('newer', BACKEND_BIN, [
    'start',
    '--name',
    'newer',
    '--state-dir',
    tempDir('newer'),
    '--etcd-client-urls',
    c.etcd.url,
    '--nats-url',
    c.nats.url,
    '--api-host',
    '127.0.0.1',
    '--api-port',
    String(await freePort()),
    '--agent-host',
    '127.0.0.1',
    '--agent-port',
    String(await freePort()),
    '--legacy-api-port',
    '0',
  ]);
  const exit = await proc.exited;
  await proc.drained();
  assert.is(exit.code, 1, proc.tail());
  assert.equal(messageLines(proc.lines('stderr').join('\n')), [`monitor-backend: ${expected}`]);
  const errors = proc.jsonLines().filter((l) => l.level === 'error');
  assert.ok(
    errors.some((l) => l.error === expected),
    proc.tail(),
  );

  const before = await durableKeys(c);
  const up = await cli(upgradeArgs(c, '--skip-confirm'));
  assert.is(up.code, 1, show(up));
  assert.equal(messageLines(up.stderr), [`monitor-backend: ${expected}`]);
  const init = await cli([
    'init',
    '--etcd-client-urls',
    c.etcd.url,
    '--cluster-admin-username',
    'boss',
    '--cluster-admin-password',
    'long-enough-1',
  ]);
  assert.is(init.code, 1, show(init));
  assert.equal(messageLines(init.stderr), [`monitor-backend: ${expected}`]);
  assert.equal(await durableKeys(c), before);
});

// A datastore for the last two tests: unversioned, with a check to store again, no backend.
let racing: Cluster;

test('another upgrade holding the lock: upgrade refuses naming it, exit 1, and writes nothing', async () => {
  racing = await newCluster();
  await racing.client.put(etcdKeys.namespace('default')).value(JSON.stringify({ name: 'default' }));
  await makeUnversioned(racing);
  const lease = racing.client.lease(60);
  leases.push(lease);
  const holder = { host: 'elsewhere', pid: 4242, since: Math.floor(Date.now() / 1000), by: VERSION };
  await lease.put(etcdKeys.upgradeLock).value(JSON.stringify(holder));
  const before = await durableKeys(racing);
  const r = await cli(upgradeArgs(racing, '--skip-confirm'));
  assert.is(r.code, 1, show(r));
  assert.match(
    messageLines(r.stderr).join('\n'),
    new RegExp(
      `^monitor-backend: another upgrade is running \\(monitor-backend ${VERSION}, pid 4242 on elsewhere, since `,
    ),
  );
  assert.equal(await durableKeys(racing), before);
  await lease.revoke();
});

test('two upgrades started together: the migration and the version are written once', async () => {
  const checkKey = configKeys.namespaced('checks', 'default', 'older');
  const kv = async (key: string) => (await racing.client.getAll().prefix(key).exec()).kvs[0];
  assert.is(String((await kv(checkKey))?.version), '1', 'the check as it was created');
  const runs = await Promise.all([
    cli(upgradeArgs(racing, '--skip-confirm')),
    cli(upgradeArgs(racing, '--skip-confirm')),
  ]);
  const applied = runs.filter((r) => r.code === 0 && r.stdout.includes('datastore upgraded from version 0'));
  assert.is(applied.length, 1, runs.map(show).join('\n---\n'));
  const other = runs.find((r) => r !== applied[0])!;
  const otherSaid = `${other.stdout}${messageLines(other.stderr).join('\n')}`;
  assert.ok(
    (other.code === 0 && otherSaid.includes(`already at version ${LATEST}: nothing to upgrade`)) ||
      (other.code === 1 && otherSaid.includes('another upgrade is running')),
    show(other),
  );
  assert.is(String((await kv(checkKey))?.version), '2', 'the check was stored again once');
  assert.is(String((await kv(etcdKeys.datastoreVersion))?.version), '1', 'the version key was written once');
});

test.run();
