/**
 * The HAProxy configuration in front of a local cluster (`make cluster`, the chaos suite): one
 * frontend for the REST API and one for the agent WebSocket, each balancing over every backend with
 * `leastconn` (agent sockets live long, so the count of open ones is what to even out), and when
 * asked a third one for the legacy API (port 4567 of each node). Each checks
 * each backend's `/ready` on its API port, so a node that is stopping, or that lost etcd, NATS or
 * its shards, takes no new connection. docs/operations-local-cluster.md#haproxy explains each setting.
 */
export interface HaproxyBackend {
  name: string;
  host?: string;
  apiPort: number;
  agentPort: number;
  /** The node's legacy API (docs/operations.md#legacy-api), when the frontend below is wanted. */
  legacyPort?: number;
}

interface HaproxyOptions {
  host?: string;
  apiPort: number;
  agentPort: number;
  /**
   * A third frontend for the legacy API, balanced like the REST one over the backends that have a
   * legacy port, checked on their API port's /ready too (the legacy API shares the node's stores).
   */
  legacyPort?: number;
  backends: HaproxyBackend[];
  /** HAProxy's own stats page (`/stats`), when set. */
  statsPort?: number;
  /** Milliseconds between health checks; two failures take a server out, two successes bring it back. */
  checkIntervalMs?: number;
  pidFile?: string;
  /**
   * Log to stderr (HAProxy in the foreground, `-db`): server state changes (`backend-2 is DOWN`) and one
   * line per request or agent connection, in HAProxy's HTTP log format.
   */
  logToStderr?: boolean;
}

export function haproxyConfig(o: HaproxyOptions): string {
  const host = o.host ?? '127.0.0.1';
  const inter = o.checkIntervalMs ?? 1000;
  const servers = (port: (b: HaproxyBackend) => number | undefined) =>
    o.backends
      .filter((b) => port(b) !== undefined)
      .map((b) => `    server ${b.name} ${b.host ?? '127.0.0.1'}:${port(b)} check port ${b.apiPort}`);
  const check = [
    '    option httpchk',
    '    http-check send meth GET uri /ready',
    '    http-check expect status 200',
  ];
  return [
    'global',
    // 20000 cannot be had under the default file limit of 20000 (two descriptors per connection).
    '    maxconn 4000',
    ...(o.pidFile ? [`    pidfile ${o.pidFile}`] : []),
    ...(o.logToStderr ? ['    log stderr format raw daemon'] : []),
    'defaults',
    '    mode http',
    // logasap: an agent's line is written when its upgrade is answered, not when its socket closes
    // hours later, so a post-mortem sees the handshakes of sockets still open.
    ...(o.logToStderr ? ['    log global', '    option httplog', '    option logasap'] : []),
    '    timeout connect 5s',
    '    timeout client 60s',
    '    timeout server 60s',
    // After "101 Switching Protocols": agent sockets are idle between keepalives for up to minutes.
    '    timeout tunnel 1h',
    '    timeout client-fin 5s',
    // A connection refused by a node that is stopping is tried on another one at once: by default
    // HAProxy retries the same server, a second apart, and redispatches only on the last retry.
    '    option redispatch 1',
    '    retries 3',
    // A node that comes back (restarted, or rejoined after a stall) takes its share of new agents
    // over 10 s instead of all of them at once: with leastconn it has the fewest sockets, and it is
    // still taking its shards back (docs/operations-local-cluster.md#haproxy).
    `    default-server inter ${inter}ms fall 2 rise 2 slowstart 10s`,
    'frontend fe_api',
    `    bind ${host}:${o.apiPort}`,
    '    default_backend be_api',
    'frontend fe_agents',
    `    bind ${host}:${o.agentPort}`,
    '    default_backend be_agents',
    ...(o.legacyPort
      ? ['frontend fe_legacy', `    bind ${host}:${o.legacyPort}`, '    default_backend be_legacy']
      : []),
    'backend be_api',
    '    balance leastconn',
    ...check,
    ...servers((b) => b.apiPort),
    'backend be_agents',
    '    balance leastconn',
    ...check,
    ...servers((b) => b.agentPort),
    ...(o.legacyPort
      ? ['backend be_legacy', '    balance leastconn', ...check, ...servers((b) => b.legacyPort)]
      : []),
    ...(o.statsPort
      ? ['frontend fe_stats', `    bind ${host}:${o.statsPort}`, '    stats enable', '    stats uri /stats']
      : []),
    '',
  ].join('\n');
}
