/**
 * The layout of a local cluster (`make cluster`): its folder, its ports and its eleven processes, all
 * derived from the environment. `up` saves what it used in `<dir>/cluster.json`; `down` and `status`
 * read that file, so they act on what was started whatever the environment says now.
 *
 * Ports: CLUSTER_BASE_PORT (default 18100) places every port at a fixed offset from it; each one can
 * be set on its own too (docs/operations-local-cluster.md#ports). The triples of the three etcd
 * members, NATS nodes and backends are comma lists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

export const SIZE = 3;
const DEFAULT_BASE_PORT = 18100;

interface ClusterPorts {
  haproxyApi: number;
  haproxyAgent: number;
  haproxyStats: number;
  haproxyLegacy: number;
  backendApi: number[];
  backendLegacy: number[];
  backendAgent: number[];
  etcdClient: number[];
  etcdPeer: number[];
  natsClient: number[];
  natsCluster: number[];
  natsHttp: number[];
  agentApi: number;
  agentSocket: number;
  agentStatsd: number;
}

export interface ClusterConfig {
  /** Absolute path of the cluster folder. */
  dir: string;
  /** The repository root (where bin/ is). */
  root: string;
  ports: ClusterPorts;
  agentName: string;
  adminUser: string;
  adminPassword: string;
  logLevel: string;
}

/** Environment variable of each port, with its offset from CLUSTER_BASE_PORT (triples: offset + 1..3). */
const PORT_VARS: Array<[keyof ClusterPorts, string, number]> = [
  ['haproxyApi', 'CLUSTER_API_PORT', 0],
  ['haproxyAgent', 'CLUSTER_AGENT_PORT', 1],
  ['haproxyStats', 'CLUSTER_STATS_PORT', 2],
  ['haproxyLegacy', 'CLUSTER_LEGACY_PORT', 3],
  ['backendApi', 'CLUSTER_BACKEND_API_PORTS', 10],
  ['backendAgent', 'CLUSTER_BACKEND_AGENT_PORTS', 20],
  ['etcdClient', 'CLUSTER_ETCD_CLIENT_PORTS', 30],
  ['etcdPeer', 'CLUSTER_ETCD_PEER_PORTS', 40],
  ['natsClient', 'CLUSTER_NATS_PORTS', 50],
  ['natsCluster', 'CLUSTER_NATS_CLUSTER_PORTS', 60],
  ['natsHttp', 'CLUSTER_NATS_HTTP_PORTS', 70],
  ['agentApi', 'CLUSTER_AGENT_API_PORT', 80],
  ['agentSocket', 'CLUSTER_AGENT_SOCKET_PORT', 81],
  ['agentStatsd', 'CLUSTER_AGENT_STATSD_PORT', 82],
  ['backendLegacy', 'CLUSTER_BACKEND_LEGACY_PORTS', 90],
];

const TRIPLES = new Set<keyof ClusterPorts>([
  'backendApi',
  'backendLegacy',
  'backendAgent',
  'etcdClient',
  'etcdPeer',
  'natsClient',
  'natsCluster',
  'natsHttp',
]);

function port(text: string, variable: string): number {
  const n = Number(text.trim());
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${variable}: "${text}" is not a port`);
  return n;
}

function portsFromEnv(env: NodeJS.ProcessEnv): ClusterPorts {
  const baseText = env.CLUSTER_BASE_PORT;
  const base = baseText ? port(baseText, 'CLUSTER_BASE_PORT') : DEFAULT_BASE_PORT;
  if (base + 93 > 65535)
    throw new Error(`CLUSTER_BASE_PORT: ${base} leaves no room for the 94 ports above it`);
  const out: Partial<Record<keyof ClusterPorts, number | number[]>> = {};
  for (const [key, variable, offset] of PORT_VARS) {
    const given = env[variable];
    if (TRIPLES.has(key)) {
      const list = given
        ? given.split(',').map((p) => port(p, variable))
        : [1, 2, 3].map((i) => base + offset + i);
      if (list.length !== SIZE) throw new Error(`${variable}: needs ${SIZE} comma-separated ports`);
      out[key] = list;
    } else {
      out[key] = given ? port(given, variable) : base + offset;
    }
  }
  const ports = out as ClusterPorts;
  const all = allPorts(ports);
  const twice = all.find((p, i) => all.indexOf(p) !== i);
  if (twice !== undefined) throw new Error(`port ${twice} is given twice`);
  return ports;
}

/** Every port of the cluster, with what listens there (for the free-port check and `status`). */
export function portList(p: ClusterPorts): Array<{ port: number; what: string; variable: string }> {
  const out: Array<{ port: number; what: string; variable: string }> = [
    { port: p.haproxyApi, what: 'haproxy REST frontend', variable: 'CLUSTER_API_PORT' },
    { port: p.haproxyAgent, what: 'haproxy agent frontend', variable: 'CLUSTER_AGENT_PORT' },
    { port: p.haproxyStats, what: 'haproxy stats', variable: 'CLUSTER_STATS_PORT' },
    { port: p.haproxyLegacy, what: 'haproxy legacy API frontend', variable: 'CLUSTER_LEGACY_PORT' },
  ];
  for (let i = 0; i < SIZE; i++) {
    const n = i + 1;
    out.push(
      { port: p.backendApi[i]!, what: `backend-${n} API`, variable: 'CLUSTER_BACKEND_API_PORTS' },
      { port: p.backendAgent[i]!, what: `backend-${n} agent port`, variable: 'CLUSTER_BACKEND_AGENT_PORTS' },
      {
        port: p.backendLegacy[i]!,
        what: `backend-${n} legacy API`,
        variable: 'CLUSTER_BACKEND_LEGACY_PORTS',
      },
      { port: p.etcdClient[i]!, what: `etcd-${n} client port`, variable: 'CLUSTER_ETCD_CLIENT_PORTS' },
      { port: p.etcdPeer[i]!, what: `etcd-${n} peer port`, variable: 'CLUSTER_ETCD_PEER_PORTS' },
      { port: p.natsClient[i]!, what: `nats-${n} client port`, variable: 'CLUSTER_NATS_PORTS' },
      { port: p.natsCluster[i]!, what: `nats-${n} route port`, variable: 'CLUSTER_NATS_CLUSTER_PORTS' },
      { port: p.natsHttp[i]!, what: `nats-${n} monitoring port`, variable: 'CLUSTER_NATS_HTTP_PORTS' },
    );
  }
  out.push(
    { port: p.agentApi, what: 'agent HTTP API', variable: 'CLUSTER_AGENT_API_PORT' },
    { port: p.agentSocket, what: 'agent check-result socket', variable: 'CLUSTER_AGENT_SOCKET_PORT' },
    { port: p.agentStatsd, what: 'agent StatsD, UDP', variable: 'CLUSTER_AGENT_STATSD_PORT' },
  );
  return out;
}

function allPorts(p: ClusterPorts): number[] {
  return portList(p).map((x) => x.port);
}

/** The cluster folder: CLUSTER_DIR, or `.cluster` under the repository root. */
export function clusterDir(env: NodeJS.ProcessEnv, root: string): string {
  return resolve(root, env.CLUSTER_DIR || '.cluster');
}

/** The configuration `up` will use, from the environment. */
export function configFromEnv(env: NodeJS.ProcessEnv, root: string): ClusterConfig {
  return {
    dir: clusterDir(env, root),
    root,
    ports: portsFromEnv(env),
    agentName: env.CLUSTER_AGENT_NAME || hostname(),
    adminUser: env.ADMIN_USER || 'admin',
    adminPassword: env.ADMIN_PASSWORD || 'P@ssw0rd!',
    logLevel: env.LOG_LEVEL || 'info',
  };
}

export const savedConfigFile = (dir: string) => `${dir}/cluster.json`;

/** What the last `up` saved in `dir`, or undefined when it never ran there. */
export function savedConfig(dir: string): ClusterConfig | undefined {
  const file = savedConfigFile(dir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterConfig;
}

/** The ports on which `a` and `b` differ, named by their variable; empty when the same. */
export function portDifferences(a: ClusterPorts, b: ClusterPorts): string[] {
  // A port `a` lacks (a folder saved before the legacy API ports existed) is not pinned by its data.
  return PORT_VARS.filter(
    ([key]) => a[key] !== undefined && JSON.stringify(a[key]) !== JSON.stringify(b[key]),
  ).map(([, v]) => v);
}
