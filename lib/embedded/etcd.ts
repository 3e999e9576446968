// The embedded single-node etcd that `monitor-backend start` runs when no --etcd-client-urls are given.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { resolveBinary } from './binaries.ts';
import { checkPortsFree, hostPortOfUrl } from './ports.ts';
import { connectableHost, serviceOf, type EmbeddedService } from './service.ts';
import { Supervisor } from './supervisor.ts';

interface EmbeddedEtcdOptions {
  stateDir: string;
  node: string;
  listenClientUrls: string[];
  listenPeerUrls: string[];
  log: Logger;
}

const DEFAULTS = {
  readyTimeoutMs: 20_000,
  healthTimeoutMs: 1_000,
  /** Revisions older than this are compacted, so the backend file stops growing. */
  autoCompactionRetention: '5m',
  quotaBackendBytes: 4 * 1024 * 1024 * 1024,
} as const;

/** `http://0.0.0.0:2379` -> `http://127.0.0.1:2379`; other URLs unchanged. Never adds a path (etcd rejects one). */
function advertisedUrl(url: string): string {
  const u = new URL(url);
  const host = connectableHost(u.hostname);
  if (host === u.hostname) return url.replace(/\/+$/, '');
  return `${u.protocol}//${host.includes(':') ? `[${host}]` : host}${u.port === '' ? '' : `:${u.port}`}`;
}

function etcdArgs(o: Omit<EmbeddedEtcdOptions, 'log'>, dataDir: string): string[] {
  const clientAdv = o.listenClientUrls.map(advertisedUrl);
  const peerAdv = o.listenPeerUrls.map(advertisedUrl);
  return [
    '--name',
    o.node,
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    o.listenClientUrls.join(','),
    '--advertise-client-urls',
    clientAdv.join(','),
    '--listen-peer-urls',
    o.listenPeerUrls.join(','),
    '--initial-advertise-peer-urls',
    peerAdv.join(','),
    // Only read when the data dir is new; a restart with existing data keeps its own membership.
    '--initial-cluster',
    `${o.node}=${peerAdv[0]}`,
    '--initial-cluster-state',
    'new',
    '--initial-cluster-token',
    `monitor-${o.node}`,
    '--auto-compaction-mode',
    'periodic',
    '--auto-compaction-retention',
    DEFAULTS.autoCompactionRetention,
    '--quota-backend-bytes',
    String(DEFAULTS.quotaBackendBytes),
    '--logger',
    'zap',
    '--log-level',
    'warn',
    '--log-outputs',
    'stderr',
  ];
}

// etcd reads every ETCD_* variable as a flag and refuses to start when one shadows a command-line
// flag, so an operator's shell settings for etcdctl must not leak into the child.
function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ETCD_')));
}

async function healthy(url: string): Promise<boolean> {
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(DEFAULTS.healthTimeoutMs) });
  if (!res.ok) return false;
  const body = (await res.json()) as { health?: unknown };
  return body.health === 'true' || body.health === true;
}

export async function startEmbeddedEtcd(o: EmbeddedEtcdOptions): Promise<EmbeddedService> {
  const bin = resolveBinary('etcd');
  if (bin === undefined)
    throw new Error(
      'etcd not found; install the etcd-server package (make setup does) or pass --etcd-client-urls',
    );
  if (o.listenClientUrls.length === 0 || o.listenPeerUrls.length === 0)
    throw new Error('embedded etcd needs at least one client URL and one peer URL');
  await checkPortsFree([
    ...o.listenClientUrls.map((u) => ({ ...hostPortOfUrl(u), flag: 'etcd-listen-client-urls' })),
    ...o.listenPeerUrls.map((u) => ({ ...hostPortOfUrl(u), flag: 'etcd-listen-peer-urls' })),
  ]);
  // etcd creates the data dir itself with the 0700 it insists on; only its parent must exist.
  mkdirSync(o.stateDir, { recursive: true });
  const dataDir = join(o.stateDir, 'etcd');
  const endpoints = o.listenClientUrls.map(advertisedUrl);
  const healthUrl = endpoints[0] as string;
  const supervisor = new Supervisor({
    name: 'etcd',
    command: bin,
    args: etcdArgs(o, dataDir),
    cwd: o.stateDir,
    env: childEnv(),
    pidFile: join(o.stateDir, 'etcd.pid'),
    ready: () => healthy(healthUrl),
    readyTimeoutMs: DEFAULTS.readyTimeoutMs,
    log: o.log,
    // The trailing space keeps /x/etcd from matching a child of /x/etcd2.
    matchCmdline: ['etcd', `--data-dir ${dataDir} `],
  });
  await supervisor.start();
  o.log.info('embedded etcd is ready', { endpoints, dataDir, pid: supervisor.pid });
  return serviceOf('etcd', endpoints, supervisor);
}
