/**
 * `make cluster`: starts the local cluster in the background, in order (etcd, NATS, backends, the
 * administrator, HAProxy, the agent), waiting at each step until what started serves. A step that
 * fails stops everything this run started and ends with one line saying why.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkPortsFree, PortInUseError } from '../../../lib/embedded/ports.ts';
import { buildIfStale } from '../../build/build.ts';
import {
  configFromEnv,
  portDifferences,
  portList,
  savedConfig,
  savedConfigFile,
  type ClusterConfig,
} from './config.ts';
import { stopAll } from './down.ts';
import { call } from './http.ts';
import { runningPid, startProcess } from './processes.ts';
import {
  agentWsUrl,
  apiKeyFile,
  backendApiUrls,
  etcdUrls,
  legacyUrl,
  missingBinaries,
  natsMonitorUrls,
  processes,
  restUrl,
  statsUrl,
  type Kind,
  type ProcessSpec,
} from './topology.ts';
import { haproxyServers } from './status.ts';

const DEFAULTS = {
  pollMs: 200,
  etcdReadyMs: 60_000,
  natsReadyMs: 60_000,
  backendReadyMs: 180_000,
  haproxyReadyMs: 60_000,
  agentReadyMs: 90_000,
  initTimeoutS: 30,
} as const;

class StartError extends Error {}

/** Set by SIGINT or SIGTERM while starting: the next poll gives up, and what started is stopped. */
let interrupted = false;

/** A path for messages: relative to the current folder when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
}

/** The last line a process wrote to its log, cut short. */
function lastLine(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const last = lines[lines.length - 1] ?? '';
    return last.startsWith('=== ') ? '' : last.slice(0, 300);
  } catch {
    return '';
  }
}

/** Polls `check` until it returns a value; fails when one of `watch` exits, or after `timeoutMs`. */
async function waitFor<T>(
  what: string,
  watch: ProcessSpec[],
  timeoutMs: number,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (interrupted) throw new StartError('interrupted');
    const value = await check();
    if (value !== undefined) return value;
    const dead = watch.find((s) => runningPid(s) === undefined);
    if (dead) {
      const last = lastLine(dead.logFile);
      throw new StartError(
        `${dead.name} exited while waiting for ${what} (${shown(dead.logFile)}${last ? `: ${last}` : ''})`,
      );
    }
    if (Date.now() > deadline)
      throw new StartError(
        `timed out after ${timeoutMs / 1000}s waiting for ${what} (logs in ${shown(dirname(watch[0]!.logFile))})`,
      );
    await sleep(DEFAULTS.pollMs);
  }
}

const ok = <T>(v: T | false | undefined): T | undefined => (v === false ? undefined : v);

function byKind(specs: ProcessSpec[], kind: Kind): ProcessSpec[] {
  return specs.filter((s) => s.kind === kind);
}

/** The key file's UUID, made on the first run and kept with the data. */
function apiKey(c: ClusterConfig): string {
  const file = apiKeyFile(c);
  if (!existsSync(file)) writeFileSync(file, `${randomUUID()}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

function runInit(c: ClusterConfig, key: string): void {
  const log = join(c.dir, 'logs', 'init.log');
  const r = spawnSync(
    process.execPath,
    [
      join(c.root, 'bin', 'monitor-backend'),
      'init',
      ...['--etcd-client-urls', etcdUrls(c).join(',')],
      ...['--cluster-admin-username', c.adminUser, '--cluster-admin-password', c.adminPassword],
      ...['--cluster-admin-api-key', key, '--ignore-already-initialized'],
      ...['--timeout', String(DEFAULTS.initTimeoutS)],
    ],
    {
      cwd: c.root,
      encoding: 'utf8',
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONITOR_BACKEND_'))),
    },
  );
  writeFileSync(log, `${r.stdout ?? ''}${r.stderr ?? ''}`);
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').pop();
    throw new StartError(`monitor-backend init failed: ${why}`);
  }
}

async function checkFree(c: ClusterConfig): Promise<void> {
  const list = portList(c.ports);
  try {
    await checkPortsFree(list.map((p) => ({ host: '127.0.0.1', port: p.port, flag: p.variable })));
  } catch (err) {
    if (!(err instanceof PortInUseError)) throw new StartError((err as Error).message);
    const what = list.find((p) => p.port === err.port)?.what ?? 'a process';
    throw new StartError(
      `port ${err.port} (${what}) is in use; set ${err.flag}, or CLUSTER_BASE_PORT to move every port`,
    );
  }
}

/** What `up` prints at the end, and again when the cluster already runs. */
function summary(c: ClusterConfig, key: string): string {
  const entity = `${restUrl(c)}/api/core/v2/namespaces/default/entities/${c.agentName}`;
  const rel = relative(process.cwd(), c.dir) || '.';
  const dirVar = rel === '.cluster' ? '' : ` CLUSTER_DIR=${c.dir}`;
  return [
    '',
    '  a local cluster is running (3 etcd, 3 nats-server, 3 backends, haproxy, one agent)',
    `    REST API (haproxy)      ${restUrl(c)}`,
    `    agent socket (haproxy)  ${agentWsUrl(c)}`,
    `    legacy API (haproxy)    ${legacyUrl(c)}   (curl ${legacyUrl(c)}/info)`,
    ...backendApiUrls(c).map(
      (u, i) =>
        `    backend-${i + 1}               ${u}   (agent port ws://127.0.0.1:${c.ports.backendAgent[i]}, legacy API http://127.0.0.1:${c.ports.backendLegacy[i]})`,
    ),
    `    haproxy stats           ${statsUrl(c)}`,
    `    nats monitoring         ${natsMonitorUrls(c).join(' ')}`,
    `    etcd                    ${etcdUrls(c).join(' ')}`,
    `    administrator           ${c.adminUser} / ${c.adminPassword}, API key ${key}`,
    `    the agent's entity:`,
    `      curl -H "Authorization: Key ${key}" ${entity}`,
    `    folder                  ${c.dir} (logs/, pids/, one data folder per process)`,
    `    status                  make cluster-status${dirVar}`,
    `    stop                    make cluster-down${dirVar}   (keeps the data; CLUSTER_WIPE=1 or make cluster-wipe removes it)`,
    '',
  ].join('\n');
}

async function bringUp(c: ClusterConfig, specs: ProcessSpec[], started: ProcessSpec[]): Promise<string> {
  const launch = (list: ProcessSpec[]) => {
    for (const s of list) {
      startProcess(s, c.root);
      started.push(s);
    }
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);

  const etcd = byKind(specs, 'etcd');
  say('starting etcd-1..3');
  launch(etcd);
  await waitFor('etcd /health', etcd, DEFAULTS.etcdReadyMs, async () => {
    const answers = await Promise.all(etcdUrls(c).map((u) => call(`${u}/health`)));
    return ok(answers.every((a) => (a?.json as { health?: string } | undefined)?.health === 'true'));
  });

  const nats = byKind(specs, 'nats');
  say('starting nats-1..3');
  launch(nats);
  await waitFor(
    'the NATS cluster (/healthz of each node, a JetStream meta leader)',
    nats,
    DEFAULTS.natsReadyMs,
    async () => {
      const urls = natsMonitorUrls(c);
      const health = await Promise.all(urls.map((u) => call(`${u}/healthz`)));
      if (!health.every((a) => a?.status === 200)) return undefined;
      const jsz = await call(`${urls[0]}/jsz`);
      const leader = (jsz?.json as { meta_cluster?: { leader?: string } } | undefined)?.meta_cluster?.leader;
      return leader ? leader : undefined;
    },
  );

  const backends = byKind(specs, 'backend');
  say('starting backend-1..3');
  launch(backends);
  for (const path of ['/health', '/ready']) {
    await waitFor(`${path} 200 from every backend`, backends, DEFAULTS.backendReadyMs, async () => {
      const answers = await Promise.all(backendApiUrls(c).map((u) => call(`${u}${path}`)));
      return ok(answers.every((a) => a?.status === 200));
    });
  }

  say('creating the administrator (monitor-backend init)');
  const key = apiKey(c);
  runInit(c, key);

  const haproxy = byKind(specs, 'haproxy');
  say('starting haproxy');
  launch(haproxy);
  await waitFor('haproxy to see every backend UP', haproxy, DEFAULTS.haproxyReadyMs, async () => {
    const servers = await haproxyServers(c);
    // Three servers in each of be_api, be_agents and be_legacy.
    return ok(servers !== undefined && servers.length === 9 && servers.every((s) => s.status === 'UP'));
  });

  const agent = byKind(specs, 'agent');
  say(`starting the agent "${c.agentName}"`);
  launch(agent);
  const entity = `${restUrl(c)}/api/core/v2/namespaces/default/entities/${encodeURIComponent(c.agentName)}`;
  await waitFor(
    "the agent's entity through haproxy",
    [...agent, ...haproxy],
    DEFAULTS.agentReadyMs,
    async () => {
      const a = await call(entity, { headers: { Authorization: `Key ${key}` } });
      return ok(a?.status === 200);
    },
  );
  return key;
}

/** `up`: returns the exit status. */
export async function up(root: string): Promise<number> {
  let c: ClusterConfig;
  try {
    c = configFromEnv(process.env, root);
  } catch (err) {
    return fail((err as Error).message);
  }
  const saved = savedConfig(c.dir);
  if (saved) {
    const differ = portDifferences(saved.ports, c.ports);
    if (differ.length)
      return fail(
        `${c.dir} holds a cluster made with other ports (${differ.join(', ')}); use the same ones, or remove it first (make cluster-wipe)`,
      );
  }
  const missing = missingBinaries();
  if (missing.length)
    return fail(`${missing.join(', ')} not installed (make setup; haproxy: apt-get install haproxy)`);
  // The backends and the agent run the compiled programs (docs/operations.md#compiled-programs):
  // `make cluster` has built them; this covers a direct run after an edit.
  const rebuilt = await buildIfStale();
  if (rebuilt !== undefined) process.stdout.write(`dist/ was stale (${rebuilt}): rebuilt\n`);

  const specs = processes(c);
  const alive = specs.filter((s) => runningPid(s) !== undefined);
  if (alive.length === specs.length) {
    process.stdout.write(`the cluster in ${c.dir} is already running\n`);
    process.stdout.write(summary(c, apiKey(c)));
    return 0;
  }
  if (alive.length)
    return fail(
      `part of a cluster runs from ${c.dir} (${alive.map((s) => s.name).join(', ')}); stop it first: make cluster-down`,
    );

  const started: ProcessSpec[] = [];
  const onSignal = () => {
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await checkFree(c);
    mkdirSync(c.dir, { recursive: true });
    writeFileSync(savedConfigFile(c.dir), `${JSON.stringify(c, null, 2)}\n`);
    const key = await bringUp(c, specs, started);
    process.stdout.write(summary(c, key));
    return 0;
  } catch (err) {
    const message = err instanceof StartError ? err.message : ((err as Error).stack ?? String(err));
    if (started.length) {
      process.stderr.write(`stopping what this run started (${started.map((s) => s.name).join(', ')})\n`);
      await stopAll(started, () => {});
    }
    return fail(message);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function fail(message: string): number {
  process.stderr.write(`make cluster: ${message}\n`);
  return 1;
}
