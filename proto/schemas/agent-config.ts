import { hostname } from 'node:os';
import * as v from 'valibot';
import type { FlagSpec } from '../flags.ts';
import { LOG_LEVELS } from '../log-levels.ts';
import { Name } from './common.ts';
import { DEFAULT_REDACT } from './entity.ts';

export const AGENT_ENV_PREFIX = 'MONITOR_';
export const AGENT_CONFIG_FILE = '/etc/monitor/agent.yml';
const DEFAULT_BACKEND_PORT = '8081';

export const agentFlags: FlagSpec[] = [
  {
    name: 'config-file',
    short: 'c',
    type: 'string',
    description: 'path to the YAML config file',
    default: AGENT_CONFIG_FILE,
  },
  {
    name: 'backend-url',
    type: 'list',
    description: 'ws or wss URL of a backend; repeat for several (port 8081 when none is given)',
    default: ['ws://127.0.0.1:8081'],
  },
  {
    name: 'name',
    type: 'string',
    description: 'entity name of this agent',
    default: hostname(),
    alias: 'id',
  },
  { name: 'namespace', type: 'string', description: 'namespace of the agent entity', default: 'default' },
  { name: 'subscriptions', type: 'list', description: 'subscriptions of the agent', default: [] },
  {
    name: 'labels',
    type: 'map',
    description: 'entity labels, key=value pairs (env: a JSON object)',
    default: {},
  },
  {
    name: 'annotations',
    type: 'map',
    description: 'entity annotations, key=value pairs (env: a JSON object)',
    default: {},
  },
  {
    name: 'redact',
    type: 'list',
    description: 'field names whose values are redacted',
    default: DEFAULT_REDACT,
  },
  { name: 'user', type: 'string', description: 'user name for the backend', default: 'agent' },
  { name: 'password', type: 'string', description: 'password for the backend', default: 'P@ssw0rd!' },
  // The documented variable name carries a typo; compatibility wins over tidiness.
  {
    name: 'keepalive-interval',
    type: 'int',
    description: 'seconds between keepalives',
    default: 20,
    env: `${AGENT_ENV_PREFIX}KEEPALIVE_INTERNAL`,
  },
  {
    name: 'keepalive-warning-timeout',
    type: 'int',
    description: 'seconds of silence before a keepalive warning',
    default: 120,
    alias: 'keepalive-timeout',
  },
  {
    name: 'keepalive-critical-timeout',
    type: 'int',
    description: 'seconds of silence before a keepalive critical alert (0: off)',
    default: 0,
  },
  {
    name: 'keepalive-handlers',
    type: 'list',
    description: 'handlers of keepalive events',
    default: ['keepalive'],
  },
  {
    name: 'backend-handshake-timeout',
    type: 'float',
    description: 'seconds allowed for the WebSocket handshake',
    default: 15,
  },
  {
    name: 'backend-heartbeat-interval',
    type: 'float',
    description: 'seconds between WebSocket pings',
    default: 30,
  },
  {
    name: 'backend-heartbeat-timeout',
    type: 'float',
    description: 'seconds without any data from the backend before reconnecting',
    default: 45,
  },
  {
    name: 'protobuf',
    type: 'bool',
    description: 'ask the backend for protobuf payloads (Accept: application/octet-stream) instead of JSON',
    default: false,
  },
  { name: 'retry-min', type: 'float', description: 'first reconnection delay in seconds', default: 1 },
  { name: 'retry-max', type: 'float', description: 'longest reconnection delay in seconds', default: 120 },
  {
    name: 'retry-multiplier',
    type: 'float',
    description: 'growth factor of the reconnection delay',
    default: 2,
  },
  {
    name: 'cache-dir',
    type: 'string',
    description: 'cache directory',
    default: '/var/cache/monitor/monitor-agent',
  },
  {
    name: 'deregister',
    type: 'bool',
    description: 'ask for a deregistration event when the agent stops',
    default: false,
  },
  {
    name: 'deregistration-handler',
    type: 'string',
    description: 'handler of the deregistration event',
    default: '',
  },
  { name: 'log-level', type: 'string', description: `log level: ${LOG_LEVELS.join(', ')}`, default: 'warn' },
  {
    name: 'allow-list',
    type: 'string',
    description: 'path of the allow list file (YAML or JSON array of {exec, args, sha512, enable_env})',
    default: '',
  },
  {
    name: 'api-host',
    type: 'string',
    description: 'bind address of the agent HTTP API',
    default: '127.0.0.1',
  },
  { name: 'api-port', type: 'int', description: 'port of the agent HTTP API', default: 3031 },
  { name: 'disable-api', type: 'bool', description: 'disable the agent HTTP API', default: false },
  { name: 'assets-burst-limit', type: 'int', description: 'burst of asset fetches', default: 100 },
  { name: 'assets-rate-limit', type: 'float', description: 'asset fetches per second', default: 1.39 },
  { name: 'disable-assets', type: 'bool', description: 'disable assets on this agent', default: false },
  {
    name: 'detect-cloud-provider',
    type: 'bool',
    description: 'probe the cloud environment (short timeouts, in the background)',
    default: false,
  },
  {
    name: 'discover-processes',
    type: 'bool',
    description: 'accepted for compatibility; process discovery is unavailable',
    default: false,
  },
  {
    name: 'events-burst-limit',
    type: 'int',
    description: 'burst of events relayed to the backend',
    default: 10,
  },
  {
    name: 'events-rate-limit',
    type: 'float',
    description: 'events per second relayed to the backend',
    default: 10,
  },
  {
    name: 'outbox-max-bytes',
    type: 'int',
    description: 'largest size of the on-disk event queue in cache-dir; new events are refused when full',
    default: 256 * 1024 * 1024,
  },
  {
    name: 'insecure-skip-tls-verify',
    type: 'bool',
    description: 'skip TLS verification of the backend (development only)',
    default: false,
  },
  {
    name: 'cert-file',
    type: 'string',
    description: 'agent certificate (chain with the leaf first) for mutual TLS',
    default: '',
  },
  { name: 'key-file', type: 'string', description: 'agent private key for mutual TLS', default: '' },
  {
    name: 'trusted-ca-file',
    type: 'string',
    description: 'certificate authorities trusted for the backend',
    default: '',
  },
  {
    name: 'socket-host',
    type: 'string',
    description: 'bind address of the TCP and UDP sockets',
    default: '127.0.0.1',
  },
  { name: 'socket-port', type: 'int', description: 'port of the TCP and UDP sockets', default: 3030 },
  { name: 'disable-sockets', type: 'bool', description: 'disable the TCP and UDP sockets', default: false },
  {
    name: 'legacy-config',
    type: 'string',
    description:
      'run a legacy client definition: a directory of *.json files (merged in name order) or one file',
    default: '',
  },
  { name: 'statsd-disable', type: 'bool', description: 'disable the StatsD listener', default: false },
  {
    name: 'statsd-event-handlers',
    type: 'list',
    description: 'handlers of StatsD metric events',
    default: [],
  },
  { name: 'statsd-flush-interval', type: 'int', description: 'seconds between StatsD flushes', default: 10 },
  {
    name: 'statsd-metrics-host',
    type: 'string',
    description: 'bind address of the StatsD listener',
    default: '127.0.0.1',
  },
  { name: 'statsd-metrics-port', type: 'int', description: 'UDP port of the StatsD listener', default: 8125 },
];

/**
 * ws/wss URL with the default port filled in. The explicit port is read from the text because the
 * WHATWG parser drops a port equal to the scheme default (`ws://h:80` would otherwise become 8081).
 */
export function normalizeBackendUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not a URL`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new Error(`"${raw}" must use the ws or wss scheme`);
  if (u.username || u.password)
    throw new Error(`"${raw}" must not hold credentials (use --user and --password)`);
  if (!u.hostname) throw new Error(`"${raw}" has no host`);
  const authority = raw.slice(raw.indexOf('//') + 2).split(/[/?#]/, 1)[0]!;
  const explicit = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(authority)?.[2];
  const port =
    u.port || (explicit !== undefined ? (u.protocol === 'ws:' ? '80' : '443') : DEFAULT_BACKEND_PORT);
  const path = u.pathname === '/' ? '' : u.pathname;
  return `${u.protocol}//${u.hostname}:${port}${path}${u.search}`;
}

const BackendUrls = v.pipe(
  v.array(v.string()),
  v.minLength(1, 'needs at least one backend URL'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const out: string[] = [];
    for (const raw of dataset.value) {
      try {
        out.push(normalizeBackendUrl(raw.trim()));
      } catch (e) {
        addIssue({ message: (e as Error).message });
        return NEVER;
      }
    }
    return out;
  }),
);

/** Names checked one by one so the message quotes the bad item instead of an array index. */
const NameList = v.pipe(
  v.array(v.string()),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const item of dataset.value) {
      const r = v.safeParse(Name, item);
      if (!r.success) {
        addIssue({ message: `"${item}" ${r.issues[0]!.message}` });
        return;
      }
    }
  }),
);

const LABEL_KEY = /^[A-Za-z][A-Za-z0-9_]*$/;
const Labels = v.pipe(
  v.record(v.string(), v.string()),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const bad = Object.keys(dataset.value).find((k) => !LABEL_KEY.test(k));
    if (bad !== undefined)
      addIssue({
        message: `label key "${bad}" must start with a letter and hold only letters, digits and "_"`,
      });
  }),
);

const Int = v.pipe(v.number(), v.integer('must be a whole number'));
const Port = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be a port from 1 to 65535'),
  v.maxValue(65535, 'must be a port from 1 to 65535'),
);
const Host = v.pipe(v.string(), v.minLength(1, 'must not be empty'));
const PositiveSeconds = v.pipe(v.number(), v.gtValue(0, 'must be more than 0 seconds'));

export const AgentConfig = v.pipe(
  v.object({
    'config-file': v.string(),
    'backend-url': BackendUrls,
    name: Name,
    namespace: Name,
    subscriptions: NameList,
    labels: Labels,
    annotations: v.record(v.string(), v.string()),
    redact: v.array(v.string()),
    user: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
    password: v.string(),
    'keepalive-interval': v.pipe(Int, v.minValue(1, 'must be at least 1 second')),
    'keepalive-warning-timeout': v.pipe(Int, v.minValue(5, 'must be at least 5 seconds')),
    'keepalive-critical-timeout': v.pipe(
      Int,
      v.check((n) => n === 0 || n >= 5, 'must be 0 (off) or at least 5 seconds'),
    ),
    'keepalive-handlers': v.array(v.string()),
    'backend-handshake-timeout': PositiveSeconds,
    'backend-heartbeat-interval': PositiveSeconds,
    'backend-heartbeat-timeout': PositiveSeconds,
    protobuf: v.boolean(),
    'retry-min': PositiveSeconds,
    'retry-max': PositiveSeconds,
    'retry-multiplier': v.pipe(v.number(), v.minValue(1, 'must be at least 1')),
    'cache-dir': v.pipe(v.string(), v.minLength(1, 'must not be empty')),
    deregister: v.boolean(),
    'deregistration-handler': v.optional(v.string(), ''),
    'log-level': v.picklist(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`),
    'allow-list': v.string(),
    'api-host': Host,
    'api-port': Port,
    'disable-api': v.boolean(),
    'assets-burst-limit': v.pipe(Int, v.minValue(1, 'must be at least 1')),
    'assets-rate-limit': v.pipe(v.number(), v.gtValue(0, 'must be more than 0')),
    'disable-assets': v.boolean(),
    'detect-cloud-provider': v.boolean(),
    'discover-processes': v.boolean(),
    'events-burst-limit': v.pipe(Int, v.minValue(1, 'must be at least 1')),
    'events-rate-limit': v.pipe(v.number(), v.gtValue(0, 'must be more than 0')),
    'outbox-max-bytes': v.pipe(Int, v.minValue(64 * 1024, 'must be at least 65536 bytes')),
    'insecure-skip-tls-verify': v.boolean(),
    'cert-file': v.string(),
    'key-file': v.string(),
    'trusted-ca-file': v.string(),
    'socket-host': Host,
    'socket-port': Port,
    'disable-sockets': v.boolean(),
    'legacy-config': v.string(),
    'statsd-disable': v.boolean(),
    'statsd-event-handlers': v.array(v.string()),
    'statsd-flush-interval': v.pipe(Int, v.minValue(1, 'must be at least 1 second')),
    'statsd-metrics-host': Host,
    'statsd-metrics-port': Port,
  }),
  v.forward(
    v.partialCheck(
      [['cert-file'], ['key-file']],
      (c) => (c['cert-file'] === '') === (c['key-file'] === ''),
      () => 'must be given together with --key-file',
    ),
    ['cert-file'],
  ),
  v.forward(
    v.partialCheck(
      [['keepalive-warning-timeout'], ['keepalive-critical-timeout']],
      (c) =>
        c['keepalive-critical-timeout'] === 0 ||
        c['keepalive-warning-timeout'] < c['keepalive-critical-timeout'],
      (i) => `must be lower than --keepalive-critical-timeout (${i.input['keepalive-critical-timeout']})`,
    ),
    ['keepalive-warning-timeout'],
  ),
  // The heartbeat timeout is a read deadline renewed by each pong, so it must outlast a ping period.
  v.forward(
    v.partialCheck(
      [['backend-heartbeat-interval'], ['backend-heartbeat-timeout']],
      (c) => c['backend-heartbeat-timeout'] > c['backend-heartbeat-interval'],
      (i) => `must be greater than --backend-heartbeat-interval (${i.input['backend-heartbeat-interval']})`,
    ),
    ['backend-heartbeat-timeout'],
  ),
  v.forward(
    v.partialCheck(
      [['retry-min'], ['retry-max']],
      (c) => c['retry-max'] >= c['retry-min'],
      (i) => `must not be lower than --retry-min (${i.input['retry-min']})`,
    ),
    ['retry-max'],
  ),
);
export type AgentConfig = v.InferOutput<typeof AgentConfig>;
