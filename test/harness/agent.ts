/**
 * Launches a real agent process: bin/monitor-agent start ...
 * It does not wait for anything; tests wait on the backend's API instead.
 */
import { freePorts } from './ports.ts';
import { Proc, type ProcExit } from './proc.ts';
import { tempDir } from './tmp.ts';
import { AGENT_BIN } from './programs.ts';

export { AGENT_BIN };

interface AgentOptions {
  name: string;
  /** One or more backend agent URLs (Backend.agentUrl); --backend-url is repeated for each. */
  backendUrls: string | string[];
  /** Default 'default'. */
  namespace?: string;
  /** Passed as a comma-separated --subscriptions when given. */
  subscriptions?: string[] | string;
  /** Seconds; defaults 1, 5 and 0. */
  keepaliveInterval?: number;
  warning?: number;
  critical?: number;
  /** Defaults 'agent' / 'P@ssw0rd!'. */
  user?: string;
  password?: string;
  /** Reuse a cache dir (restart); default a fresh tempDir. */
  cacheDir?: string;
  /** Default 'debug'. */
  logLevel?: string;
  extraArgs?: string[];
  /** Ports of the agent's local listeners; free ones are picked when not given (a restart reuses them). */
  ports?: AgentPorts;
  env?: Record<string, string | undefined>;
}

/** The agent's local listeners: HTTP API (TCP), check-result socket (TCP and UDP), StatsD (UDP). */
interface AgentPorts {
  api: number;
  socket: number;
  statsd: number;
}

export interface AgentProc {
  name: string;
  ports: AgentPorts;
  /** http://127.0.0.1:<api port> */
  apiUrl: string;
  cacheDir: string;
  /** The resolved options (cacheDir filled in), for a restart. */
  options: AgentOptions;
  proc: Proc;
  /** SIGTERM, wait up to timeoutMs (default 5 s), then SIGKILL. */
  stop(timeoutMs?: number): Promise<ProcExit>;
  /** Sends `signal` to the agent's group; waits for the exit for SIGKILL/SIGTERM/SIGINT. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startAgent(o: AgentOptions): Promise<AgentProc> {
  const cacheDir = o.cacheDir ?? tempDir(`agent-${o.name}`);
  const urls = Array.isArray(o.backendUrls) ? o.backendUrls : [o.backendUrls];
  if (urls.length === 0) throw new Error('startAgent: backendUrls is empty');
  // Never the default ports: tests run many agents, and something may already listen there.
  let ports = o.ports;
  if (!ports) {
    const [api, socket, statsd] = await freePorts(3);
    ports = { api: api!, socket: socket!, statsd: statsd! };
  }
  const args = ['start'];
  for (const u of urls) args.push('--backend-url', u);
  args.push('--name', o.name, '--namespace', o.namespace ?? 'default');
  if (o.subscriptions !== undefined) {
    args.push(
      '--subscriptions',
      Array.isArray(o.subscriptions) ? o.subscriptions.join(',') : o.subscriptions,
    );
  }
  args.push(
    '--keepalive-interval',
    String(o.keepaliveInterval ?? 1),
    '--keepalive-warning-timeout',
    String(o.warning ?? 5),
    '--keepalive-critical-timeout',
    String(o.critical ?? 0),
    '--user',
    o.user ?? 'agent',
    '--password',
    o.password ?? 'P@ssw0rd!',
    '--cache-dir',
    cacheDir,
    '--log-level',
    o.logLevel ?? 'debug',
    '--api-port',
    String(ports.api),
    '--socket-port',
    String(ports.socket),
    '--statsd-metrics-port',
    String(ports.statsd),
    ...(o.extraArgs ?? []),
  );
  const proc = Proc.start(`agent:${o.name}`, AGENT_BIN, args, { env: o.env });
  return {
    name: o.name,
    cacheDir,
    ports,
    apiUrl: `http://127.0.0.1:${ports.api}`,
    options: { ...o, cacheDir, ports },
    proc,
    stop: (timeoutMs = 5000) => proc.stop(timeoutMs),
    kill: (signal: NodeJS.Signals = 'SIGKILL') => proc.send(signal),
  };
}
