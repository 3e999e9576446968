import { hostname } from 'node:os';
import { resolve } from 'node:path';
import * as v from 'valibot';
import type { FlagSpec } from '../flags.ts';
import { LOG_LEVELS } from '../log-levels.ts';
import { Name } from './common.ts';
import { legacyApiConfigEntries, legacyApiFlags } from './legacy-api-config.ts';
import { legacyClientConfigEntries, legacyClientFlags } from './legacy-client-config.ts';

export const BACKEND_ENV_PREFIX = 'MONITOR_BACKEND_';
export const BACKEND_CONFIG_FILE = '/etc/monitor/backend.yml';

export const backendFlags: FlagSpec[] = [
  {
    name: 'config-file',
    short: 'c',
    type: 'string',
    description: 'path to the YAML config file',
    default: BACKEND_CONFIG_FILE,
  },
  {
    name: 'state-dir',
    type: 'string',
    description: 'directory of embedded etcd and NATS data and pid files',
    default: '/var/lib/monitor/monitor-backend',
  },
  { name: 'name', type: 'string', description: 'name of this node in the cluster', default: hostname() },
  { name: 'api-host', type: 'string', description: 'address the REST API listens on', default: '[::]' },
  { name: 'api-port', type: 'int', description: 'port of the REST API', default: 8080 },
  {
    name: 'cert-file',
    type: 'string',
    description:
      'certificate (chain, leaf first) of the REST API port; with --key-file it serves HTTPS (REST, dashboard, /health)',
    default: '',
  },
  { name: 'key-file', type: 'string', description: 'private key of --cert-file', default: '' },
  {
    name: 'trusted-ca-file',
    type: 'string',
    description:
      'certificate authorities for client certificates on the REST API port (verified when presented, not required)',
    default: '',
  },
  {
    name: 'agent-host',
    type: 'string',
    description: 'address the agent WebSocket listens on',
    default: '[::]',
  },
  { name: 'agent-port', type: 'int', description: 'port of the agent WebSocket', default: 8081 },
  {
    name: 'agent-cert-file',
    type: 'string',
    description: 'certificate (chain, leaf first) of the agent port; with --agent-key-file it serves wss',
    default: '',
  },
  { name: 'agent-key-file', type: 'string', description: 'private key of --agent-cert-file', default: '' },
  {
    name: 'agent-trusted-ca-file',
    type: 'string',
    description: 'certificate authorities trusted for agent client certificates',
    default: '',
  },
  {
    name: 'agent-client-cert-auth',
    type: 'bool',
    description: 'require a client certificate from agents (its CN is the user)',
    default: false,
  },
  {
    name: 'etcd-client-urls',
    type: 'list',
    description: 'client URLs of an external etcd cluster (absent: start an embedded etcd)',
    default: [],
  },
  {
    name: 'etcd-username',
    type: 'string',
    description: 'user of the external etcd (wins over user info in --etcd-client-urls)',
    default: '',
  },
  { name: 'etcd-password', type: 'string', description: 'password of --etcd-username', default: '' },
  {
    name: 'etcd-trusted-ca-file',
    type: 'string',
    description: 'certificate authorities trusted for the external etcd (https URLs)',
    default: '',
  },
  {
    name: 'etcd-cert-file',
    type: 'string',
    description: 'client certificate (chain, leaf first) for the external etcd',
    default: '',
  },
  { name: 'etcd-key-file', type: 'string', description: 'private key of --etcd-cert-file', default: '' },
  {
    name: 'etcd-listen-client-urls',
    type: 'list',
    description: 'client URLs of the embedded etcd',
    default: ['http://127.0.0.1:2379'],
  },
  {
    name: 'etcd-listen-peer-urls',
    type: 'list',
    description: 'peer URLs of the embedded etcd',
    default: ['http://127.0.0.1:2380'],
  },
  {
    name: 'nats-url',
    type: 'list',
    description: 'URLs of an external NATS cluster with JetStream (absent: start an embedded nats-server)',
    default: [],
  },
  {
    name: 'nats-user',
    type: 'string',
    description: 'user of the external NATS (wins over user info in --nats-url)',
    default: '',
  },
  { name: 'nats-password', type: 'string', description: 'password of --nats-user', default: '' },
  {
    name: 'nats-creds',
    type: 'string',
    description: 'NATS credentials file (user JWT and NKey seed) of the external NATS',
    default: '',
  },
  {
    name: 'nats-tls-ca-file',
    type: 'string',
    description: 'certificate authorities trusted for the external NATS servers',
    default: '',
  },
  {
    name: 'nats-tls-cert-file',
    type: 'string',
    description: 'client certificate (chain, leaf first) for the external NATS',
    default: '',
  },
  {
    name: 'nats-tls-key-file',
    type: 'string',
    description: 'private key of --nats-tls-cert-file',
    default: '',
  },
  {
    name: 'nats-listen',
    type: 'string',
    description: 'host:port of the embedded nats-server',
    default: '127.0.0.1:4222',
  },
  {
    name: 'nats-replicas',
    type: 'int',
    description: 'JetStream replicas of the state buckets (use 3 on a three-node NATS cluster)',
    default: 1,
  },
  {
    name: 'cluster-lease-ttl',
    type: 'int',
    description: 'seconds a silent node keeps its shards before others take them',
    default: 10,
  },
  {
    name: 'shutdown-timeout',
    type: 'int',
    description: 'seconds an orderly stop (SIGTERM, SIGINT) may take before the node exits with status 1',
    default: 20,
  },
  { name: 'log-level', type: 'string', description: `log level: ${LOG_LEVELS.join(', ')}`, default: 'info' },
  {
    name: 'debug-freeze-reads',
    type: 'bool',
    description: 'freeze what actors read of their stored events, so a change in place fails (for tests)',
    default: false,
  },
  // Failed logins (API and agent handshake) before a block, and the window they are counted in
  // (docs/compatibility.md#login-limits).
  {
    name: 'login-user-failures',
    type: 'int',
    description: 'failed logins of one user name before it is blocked (0: no limit)',
    default: 10,
  },
  {
    name: 'login-user-window',
    type: 'int',
    description: 'seconds failed logins of a user name are counted, and a block lasts',
    default: 300,
  },
  {
    name: 'login-address-failures',
    type: 'int',
    description: 'failed logins from one address before it is blocked (0: no limit)',
    default: 50,
  },
  {
    name: 'login-address-window',
    type: 'int',
    description: 'seconds failed logins from an address are counted, and a block lasts',
    default: 60,
  },
  // Lifetimes of API login tokens (the reference's --access-token-expiry and --refresh-token-expiry,
  // 5 minutes and 12 hours), in seconds like every duration of ours.
  {
    name: 'access-token-expiry',
    type: 'int',
    description: 'seconds an access token of an API login is valid',
    default: 300,
  },
  {
    name: 'refresh-token-expiry',
    type: 'int',
    description: 'seconds a login session (its refresh token) lasts without a refresh',
    default: 43_200,
  },
  {
    name: 'entity-limit',
    type: 'int',
    env: 'MONITOR_ENTITY_LIMIT',
    description:
      'most entities the cluster accepts; new agents and entities beyond it are refused with 402 (0: no limit)',
    default: 0,
  },
  {
    name: 'deregistration-handler',
    type: 'string',
    description: 'handler of deregistration events when the entity names none',
    default: '',
  },
  {
    name: 'default-silenced-expiry-time',
    type: 'int',
    description: 'seconds of expire given to a silenced entry written without one (0: never expires)',
    default: 0,
  },
  {
    name: 'max-silenced-expiry-time-allowed',
    type: 'int',
    description: 'largest expire of a silenced entry in seconds, larger ones are refused (0: no cap)',
    default: 0,
  },
  {
    name: 'pipeline-workers',
    type: 'int',
    description: 'pipeline jobs (filters, mutators, handlers of one event) this node runs at the same time',
    default: 64,
  },
  ...legacyApiFlags,
  ...legacyClientFlags,
];

const Port = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(0, 'must be a port number'),
  v.maxValue(65535, 'must be a port number'),
);
const Url = v.pipe(v.string(), v.url('must be a URL such as http://127.0.0.1:2379'));
const HostPort = v.pipe(
  v.string(),
  v.regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port'),
);

/** How long an access or refresh token lives, in seconds. */
const TokenLifetime = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1 second'),
);
const LoginFailures = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(0, 'must be 0 (no limit) or more'),
);
const LoginWindow = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1 second'),
);

export const BackendConfig = v.object({
  'config-file': v.string(),
  // Absolute, because children (etcd, nats-server) run in directories of their own.
  'state-dir': v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.transform((p) => resolve(p)),
  ),
  name: Name,
  'api-host': v.string(),
  'api-port': Port,
  'cert-file': v.string(),
  'key-file': v.string(),
  'trusted-ca-file': v.string(),
  'agent-host': v.string(),
  'agent-port': Port,
  'agent-cert-file': v.string(),
  'agent-key-file': v.string(),
  'agent-trusted-ca-file': v.string(),
  'agent-client-cert-auth': v.boolean(),
  'etcd-client-urls': v.array(Url),
  'etcd-username': v.string(),
  'etcd-password': v.string(),
  'etcd-trusted-ca-file': v.string(),
  'etcd-cert-file': v.string(),
  'etcd-key-file': v.string(),
  'etcd-listen-client-urls': v.pipe(v.array(Url), v.minLength(1, 'needs at least one URL')),
  'etcd-listen-peer-urls': v.pipe(v.array(Url), v.minLength(1, 'needs at least one URL')),
  'nats-url': v.array(v.string()),
  'nats-user': v.string(),
  'nats-password': v.string(),
  'nats-creds': v.string(),
  'nats-tls-ca-file': v.string(),
  'nats-tls-cert-file': v.string(),
  'nats-tls-key-file': v.string(),
  'nats-listen': HostPort,
  'nats-replicas': v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1, 'must be 1 or more'),
    v.maxValue(5, 'must be 5 or fewer'),
  ),
  'cluster-lease-ttl': v.pipe(
    v.number(),
    v.integer(),
    v.minValue(3, 'must be at least 3 seconds'),
    v.maxValue(120, 'must be at most 120 seconds'),
  ),
  'shutdown-timeout': v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(1, 'must be at least 1 second'),
    v.maxValue(3600, 'must be at most 3600 seconds'),
  ),
  'log-level': v.picklist(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`),
  'debug-freeze-reads': v.boolean(),
  'login-user-failures': LoginFailures,
  'login-user-window': LoginWindow,
  'login-address-failures': LoginFailures,
  'login-address-window': LoginWindow,
  'access-token-expiry': TokenLifetime,
  'refresh-token-expiry': TokenLifetime,
  'entity-limit': v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(0, 'must be 0 (no limit) or more'),
  ),
  'deregistration-handler': v.string(),
  'default-silenced-expiry-time': v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(0, 'must be 0 (none) or more'),
  ),
  'max-silenced-expiry-time-allowed': v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(0, 'must be 0 (no cap) or more'),
  ),
  'pipeline-workers': v.pipe(
    v.number(),
    v.integer('must be a whole number'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(1024, 'must be at most 1024'),
  ),
  ...legacyApiConfigEntries,
  ...legacyClientConfigEntries,
});
export type BackendConfig = v.InferOutput<typeof BackendConfig>;

/**
 * How a command that talks to etcd only (`init`, `upgrade`) waits for it: one etcd call retried
 * until --timeout, or for ever with --wait.
 */
const etcdWaitFlags: FlagSpec[] = [
  { name: 'timeout', type: 'int', description: 'seconds to wait for etcd', default: 5 },
  {
    name: 'wait',
    type: 'bool',
    description: 'wait for etcd for as long as it takes (not when it refuses the certificate or password)',
    default: false,
  },
];
const etcdWaitEntries = {
  timeout: v.pipe(v.number(), v.integer(), v.minValue(1, 'must be at least 1 second')),
  wait: v.boolean(),
};

/** `monitor-backend init`: the backend's own flags (one config file serves both) plus the administrator. */
export const initFlags: FlagSpec[] = [
  ...backendFlags,
  {
    name: 'cluster-admin-username',
    type: 'string',
    description: 'name of the cluster administrator to create',
  },
  { name: 'cluster-admin-password', type: 'string', description: 'password of the cluster administrator' },
  {
    name: 'cluster-admin-api-key',
    type: 'string',
    description: 'an API key (UUID) to create for the administrator',
  },
  {
    name: 'ignore-already-initialized',
    type: 'bool',
    description: 'exit 0 when the cluster is already initialized',
    default: false,
  },
  ...etcdWaitFlags,
];

export const InitConfig = v.object({
  ...BackendConfig.entries,
  'cluster-admin-username': v.pipe(v.string('is required'), Name),
  'cluster-admin-password': v.pipe(v.string('is required'), v.minLength(8, 'must be at least 8 characters')),
  'cluster-admin-api-key': v.optional(v.pipe(v.string(), v.uuid('must be a UUID'))),
  'ignore-already-initialized': v.boolean(),
  ...etcdWaitEntries,
});
export type InitConfig = v.InferOutput<typeof InitConfig>;

/**
 * `monitor-backend upgrade`: the backend's own flags (one config file serves every command), the
 * confirmation, and how long to wait for etcd (docs/operations.md#upgrades).
 */
export const upgradeFlags: FlagSpec[] = [
  ...backendFlags,
  {
    name: 'skip-confirm',
    type: 'bool',
    description: 'upgrade without asking (needed when stdin is not a terminal)',
    default: false,
  },
  ...etcdWaitFlags,
];

export const UpgradeConfig = v.object({
  ...BackendConfig.entries,
  'skip-confirm': v.boolean(),
  ...etcdWaitEntries,
});
export type UpgradeConfig = v.InferOutput<typeof UpgradeConfig>;
