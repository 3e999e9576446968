// Every name the programs agree on: NATS subjects, JetStream KV buckets and keys, etcd keys.
// Resource names may hold characters that are not valid in a subject token or a KV key ('.', '*',
// '>', spaces, unicode), so they pass through `encodeToken`, which is reversible and keeps the
// common characters readable.

const SAFE = /^[A-Za-z0-9_-]$/;
const ALL_SAFE = /^[A-Za-z0-9_-]+$/;

export function encodeToken(value: string): string {
  if (ALL_SAFE.test(value)) return value;
  if (value === '') return '=';
  let out = '';
  for (const ch of value) {
    if (SAFE.test(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, 'utf8')) out += '=' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

export function decodeToken(token: string): string {
  if (token === '=') return '';
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const c = token[i]!;
    if (c === '=') {
      bytes.push(parseInt(token.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(c.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

export const SHARD_COUNT = 256;

export const shardToken = (shard: number): string => String(shard).padStart(3, '0');

export const subjects = {
  /** Mailbox of every actor of one shard; the owner subscribes, never with a queue group. */
  actorShard: (shard: number) => `monitor.actor.${shardToken(shard)}`,
  /** Direct messages to the session of one agent, wherever it is connected. */
  agent: (ns: string, name: string) => `monitor.agent.${encodeToken(ns)}.${encodeToken(name)}`,
  /** Ad hoc check requests queued for the scheduler: `<prefix>.<namespace>`. */
  adhocPrefix: 'monitor.adhoc',
  /** Check requests fanned out to every agent of a subscription (payload: CheckRequest as JSON). */
  subscription: (ns: string, sub: string) => `monitor.sub.${encodeToken(ns)}.${encodeToken(sub)}`,
  /**
   * Round-robin check requests of a subscription: every session subscribes with the queue group
   * `roundRobinQueue`, so NATS hands each request to exactly one agent of the subscription.
   */
  roundRobin: (ns: string, sub: string) => `monitor.rr.${encodeToken(ns)}.${encodeToken(sub)}`,
  roundRobinQueue: 'monitor-rr',
  /** Pipeline work queue (stream over `<prefix>.>`). */
  pipelinePrefix: 'monitor.pipeline',
  /** The subject of every pipeline job (proto/pipeline-job.ts). */
  pipelineJobs: 'monitor.pipeline.jobs',
  /** Parked pipeline jobs, as they were queued (outside `pipelinePrefix`: not a work queue subject). */
  pipelineDead: 'monitor.dead.pipeline',
};

/** JetStream streams. */
export const streams = {
  adhoc: 'MONITOR_ADHOC',
  pipeline: 'MONITOR_PIPELINE',
  /** Pipeline jobs started too many times without finishing (bounded, the oldest go first). */
  pipelineDead: 'MONITOR_PIPELINE_DEAD',
} as const;

/** Headers of an actor message. */
export const actorHeaders = {
  kind: 'Monitor-Actor-Kind',
  id: 'Monitor-Actor-Id',
  msgId: 'Monitor-Msg-Id',
  type: 'Monitor-Msg-Type',
} as const;

/** JetStream KV buckets: one per kind of durable actor state, the event store, and services' own. */
export const buckets = {
  entities: 'monitor_entities',
  events: 'monitor_events',
  /** Schedule actors: one record per check (its config version and next tick). */
  schedules: 'monitor_schedules',
  /** Stash actors of the legacy API: one record per stash path (its content and expiry). */
  stashes: 'monitor_stashes',
  /** Starts of redelivered pipeline jobs, by stream sequence (actors/pipeline/attempts.ts). */
  pipelineAttempts: 'monitor_pipeline_attempts',
  /** Failed logins of every node, by user name or address digest (gateway/auth/login-store.ts). */
  loginFailures: 'monitor_login_failures',
} as const;

/** Key of an actor's own record: the shard leads so a new owner can load a shard with one filter. */
export const actorRecordKey = (shard: number, idTokens: string[]): string =>
  [shardToken(shard), ...idTokens.map(encodeToken)].join('.');

export const eventKey = (ns: string, entity: string, check: string): string =>
  `${encodeToken(ns)}.${encodeToken(entity)}.${encodeToken(check)}`;

export const etcdKeys = {
  /** Every key of monitor in etcd is under it: a datastore with nothing here is a new one. */
  root: '/monitor/',
  clusterConfig: '/monitor/cluster/config',
  /**
   * The format of what is stored, `{"version": N, "by": "<program version>"}`; absent: version 0,
   * a datastore written before versions existed (gateway/node/upgrade/, docs/operations.md#upgrades).
   */
  datastoreVersion: '/monitor/cluster/datastore-version',
  /** Held, under a lease, by the one `monitor-backend upgrade` running. */
  upgradeLock: '/monitor/cluster/upgrade-lock',
  membersPrefix: '/monitor/cluster/members/',
  member: (node: string) => `/monitor/cluster/members/${node}`,
  shardsPrefix: '/monitor/shards/',
  shardOwner: (shard: number) => `/monitor/shards/${shardToken(shard)}/owner`,
  configPrefix: '/monitor/config/',
  namespace: (name: string) => `/monitor/config/namespaces/${name}`,
  user: (name: string) => `/monitor/config/users/${name}`,
  seeded: '/monitor/cluster/seeded',
  initialized: '/monitor/cluster/initialized',
  jwtSecret: '/monitor/cluster/jwt-secret',
  session: (id: string) => `/monitor/sessions/${id}`,
  /** An OIDC login under way (by a digest of its `state`), and a finished one awaiting its dashboard. */
  oidcFlow: (id: string) => `/monitor/oidc/flows/${id}`,
  oidcHandoff: (id: string) => `/monitor/oidc/handoffs/${id}`,
};

/**
 * Keys of configuration resources: `/monitor/config/<resource>/<namespace>/<name>` for namespaced
 * ones, `/monitor/config/<resource>/<name>` for cluster-wide ones. Names are validated to hold no
 * '/', so a prefix never matches across namespaces.
 */
export const configKeys = {
  namespaced: (resource: string, ns: string, name: string) => `/monitor/config/${resource}/${ns}/${name}`,
  cluster: (resource: string, name: string) => `/monitor/config/${resource}/${name}`,
  prefix: (resource: string, ns?: string) =>
    ns === undefined ? `/monitor/config/${resource}/` : `/monitor/config/${resource}/${ns}/`,
};

export function shardOfOwnerKey(key: string): number | undefined {
  const m = /^\/monitor\/shards\/(\d{3})\/owner$/.exec(key);
  return m ? Number(m[1]) : undefined;
}
