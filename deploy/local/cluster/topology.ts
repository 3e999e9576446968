/**
 * The eleven processes of a local cluster, as data: what to run, where it writes, which ports it
 * binds, and the strings its command line must hold before `down` signals a pid read from its pid
 * file (every one names a path inside the cluster folder, so a reused pid never matches).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinary } from '../../../lib/embedded/binaries.ts';
import { SIZE, type ClusterConfig } from './config.ts';
import { haproxyConfig } from './haproxy-config.ts';

export type Kind = 'etcd' | 'nats' | 'backend' | 'haproxy' | 'agent';

export interface ProcessSpec {
  name: string;
  kind: Kind;
  command: string;
  args: string[];
  /** Variables removed from the inherited environment. */
  dropEnv?: (name: string) => boolean;
  ports: number[];
  markers: string[];
  logFile: string;
  pidFile: string;
  /** SIGTERM, then SIGKILL after this long. */
  stopTimeoutMs: number;
  /** Writes the config files and folders it needs; run before the spawn. */
  prepare(): void;
}

/** The order `down` stops them in: what serves clients first, the stores last. */
export const STOP_ORDER: Kind[] = ['agent', 'haproxy', 'backend', 'nats', 'etcd'];

const range = () => Array.from({ length: SIZE }, (_, i) => i);
const url = (port: number, scheme = 'http') => `${scheme}://127.0.0.1:${port}`;

export const etcdUrls = (c: ClusterConfig) => c.ports.etcdClient.map((p) => url(p));
const natsUrls = (c: ClusterConfig) => c.ports.natsClient.map((p) => url(p, 'nats'));
export const backendApiUrls = (c: ClusterConfig) => c.ports.backendApi.map((p) => url(p));
export const restUrl = (c: ClusterConfig) => url(c.ports.haproxyApi);
export const legacyUrl = (c: ClusterConfig) => url(c.ports.haproxyLegacy);
export const backendLegacyUrls = (c: ClusterConfig) => c.ports.backendLegacy.map((p) => url(p));
export const agentWsUrl = (c: ClusterConfig) => url(c.ports.haproxyAgent, 'ws');
export const statsUrl = (c: ClusterConfig) => `${url(c.ports.haproxyStats)}/stats`;
export const natsMonitorUrls = (c: ClusterConfig) => c.ports.natsHttp.map((p) => url(p));
export const apiKeyFile = (c: ClusterConfig) => join(c.dir, 'admin.api-key');

/** The binary's path; its bare name when it is not installed (`up` checks that first, see missingBinaries). */
const binary = (name: Binary): string => resolveBinary(name) ?? name;

type Binary = 'etcd' | 'nats-server' | 'haproxy';

/** The binaries the cluster needs that are installed nowhere we look. */
export function missingBinaries(): Binary[] {
  return (['etcd', 'nats-server', 'haproxy'] as const).filter((b) => resolveBinary(b) === undefined);
}

function base(c: ClusterConfig, name: string) {
  return { logFile: join(c.dir, 'logs', `${name}.log`), pidFile: join(c.dir, 'pids', `${name}.pid`) };
}

function etcd(c: ClusterConfig): ProcessSpec[] {
  const peers = range().map((i) => `etcd-${i + 1}=${url(c.ports.etcdPeer[i]!)}`);
  return range().map((i) => {
    const name = `etcd-${i + 1}`;
    const dataDir = join(c.dir, name);
    const client = url(c.ports.etcdClient[i]!);
    const peer = url(c.ports.etcdPeer[i]!);
    return {
      name,
      kind: 'etcd',
      command: binary('etcd'),
      // Static bootstrap; the initial-cluster flags are read only while the data dir is new, so a
      // second `make cluster` on the kept data rejoins the same cluster.
      args: [
        ...['--name', name, '--data-dir', dataDir],
        ...['--listen-client-urls', client, '--advertise-client-urls', client],
        ...['--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer],
        ...['--initial-cluster', peers.join(','), '--initial-cluster-state', 'new'],
        ...['--initial-cluster-token', 'monitor-local-cluster'],
        // A dead leader is replaced within about a second on loopback.
        ...['--heartbeat-interval', '100', '--election-timeout', '1000'],
        ...['--auto-compaction-mode', 'periodic', '--auto-compaction-retention', '5m'],
        ...['--logger', 'zap', '--log-level', 'warn', '--log-outputs', 'stderr'],
      ],
      // etcd reads ETCD_* variables as flags and refuses to start when one repeats a flag.
      dropEnv: (v) => v.startsWith('ETCD_'),
      ports: [c.ports.etcdClient[i]!, c.ports.etcdPeer[i]!],
      markers: ['--data-dir', dataDir],
      stopTimeoutMs: 10_000,
      ...base(c, name),
      prepare: () => mkdirSync(dataDir, { recursive: true }),
    };
  });
}

function nats(c: ClusterConfig): ProcessSpec[] {
  const q = (s: string) => JSON.stringify(s);
  const routes = c.ports.natsCluster.map((p) => q(url(p, 'nats-route')));
  return range().map((i) => {
    const name = `nats-${i + 1}`;
    const dir = join(c.dir, name);
    const configFile = join(dir, 'nats.conf');
    const text = [
      `server_name: ${q(name)}`,
      `listen: "127.0.0.1:${c.ports.natsClient[i]}"`,
      // Monitoring: /healthz, /jsz (meta leader, streams and their replicas), /routez.
      `http: "127.0.0.1:${c.ports.natsHttp[i]}"`,
      // As the embedded server: entity and event state can exceed the 1 MB default.
      'max_payload: 8MB',
      'cluster {',
      '  name: "monitor-local"',
      `  listen: "127.0.0.1:${c.ports.natsCluster[i]}"`,
      // Every node lists every route, itself included: nats-server ignores the self-route.
      `  routes: [${routes.join(', ')}]`,
      '}',
      'jetstream {',
      `  store_dir: ${q(dir)}`,
      '}',
      '',
    ].join('\n');
    return {
      name,
      kind: 'nats',
      command: binary('nats-server'),
      args: ['-c', configFile],
      ports: [c.ports.natsClient[i]!, c.ports.natsCluster[i]!, c.ports.natsHttp[i]!],
      markers: ['-c', configFile],
      stopTimeoutMs: 10_000,
      ...base(c, name),
      prepare: () => {
        mkdirSync(dir, { recursive: true });
        writeFileSync(configFile, text);
      },
    };
  });
}

function backends(c: ClusterConfig): ProcessSpec[] {
  const bin = join(c.root, 'bin', 'monitor-backend');
  return range().map((i) => {
    const name = `backend-${i + 1}`;
    const stateDir = join(c.dir, name);
    return {
      name,
      kind: 'backend',
      command: process.execPath,
      args: [
        bin,
        'start',
        ...['--name', name, '--state-dir', stateDir],
        ...['--api-host', '127.0.0.1', '--api-port', String(c.ports.backendApi[i])],
        ...['--agent-host', '127.0.0.1', '--agent-port', String(c.ports.backendAgent[i])],
        // The legacy API has only its own Basic auth (docs/operations.md#legacy-api): localhost only.
        ...['--legacy-api-host', '127.0.0.1', '--legacy-api-port', String(c.ports.backendLegacy[i])],
        ...['--etcd-client-urls', etcdUrls(c).join(',')],
        ...['--nats-url', natsUrls(c).join(','), '--nats-replicas', String(SIZE)],
        ...['--log-level', c.logLevel],
      ],
      // The operator's MONITOR_BACKEND_* settings would override the flags above.
      dropEnv: (v) => v.startsWith('MONITOR_BACKEND_'),
      ports: [c.ports.backendApi[i]!, c.ports.backendAgent[i]!, c.ports.backendLegacy[i]!],
      markers: [bin, '--state-dir', stateDir],
      // Its own orderly stop (handing its shards over) is cut short after 30 s.
      stopTimeoutMs: 35_000,
      ...base(c, name),
      prepare: () => mkdirSync(stateDir, { recursive: true }),
    };
  });
}

function haproxy(c: ClusterConfig): ProcessSpec {
  const dir = join(c.dir, 'haproxy');
  const configFile = join(dir, 'haproxy.cfg');
  const text = haproxyConfig({
    apiPort: c.ports.haproxyApi,
    agentPort: c.ports.haproxyAgent,
    statsPort: c.ports.haproxyStats,
    legacyPort: c.ports.haproxyLegacy,
    backends: range().map((i) => ({
      name: `backend-${i + 1}`,
      apiPort: c.ports.backendApi[i]!,
      agentPort: c.ports.backendAgent[i]!,
      legacyPort: c.ports.backendLegacy[i]!,
    })),
    logToStderr: true,
  });
  return {
    name: 'haproxy',
    kind: 'haproxy',
    command: binary('haproxy'),
    // -db: in the foreground, so the pid we record is HAProxy's own.
    args: ['-db', '-f', configFile],
    ports: [c.ports.haproxyApi, c.ports.haproxyAgent, c.ports.haproxyStats, c.ports.haproxyLegacy],
    markers: ['-f', configFile],
    stopTimeoutMs: 5_000,
    ...base(c, 'haproxy'),
    prepare: () => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(configFile, text);
    },
  };
}

function agent(c: ClusterConfig): ProcessSpec {
  const bin = join(c.root, 'bin', 'monitor-agent');
  const cacheDir = join(c.dir, 'agent');
  return {
    name: 'agent',
    kind: 'agent',
    command: process.execPath,
    args: [
      bin,
      'start',
      ...['--backend-url', agentWsUrl(c), '--name', c.agentName, '--subscriptions', 'linux'],
      ...['--cache-dir', cacheDir, '--log-level', c.logLevel],
      ...['--api-port', String(c.ports.agentApi), '--socket-port', String(c.ports.agentSocket)],
      ...['--statsd-metrics-port', String(c.ports.agentStatsd)],
    ],
    // The agent reads MONITOR_* variables as flags (MONITOR_BACKEND_URL, ...).
    dropEnv: (v) => v.startsWith('MONITOR_'),
    ports: [c.ports.agentApi, c.ports.agentSocket, c.ports.agentStatsd],
    markers: [bin, '--cache-dir', cacheDir],
    stopTimeoutMs: 10_000,
    ...base(c, 'agent'),
    prepare: () => mkdirSync(cacheDir, { recursive: true }),
  };
}

/** Every process of the cluster, in start order. */
export function processes(c: ClusterConfig): ProcessSpec[] {
  return [...etcd(c), ...nats(c), ...backends(c), haproxy(c), agent(c)];
}
