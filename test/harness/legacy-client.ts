/**
 * A real monitor-agent running a legacy client definition (`--legacy-config DIR`): the harness
 * writes `client.json` (and `checks.json`, and any extra files) into a fresh directory, with free
 * ports for the TCP/UDP socket and the HTTP socket unless the test sets them, and a 1 s keepalive
 * interval (the definition's `keepalive.interval`) so tests need not wait 20 s.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent, type AgentProc } from './agent.ts';
import { freePorts } from './ports.ts';
import { tempDir } from './tmp.ts';

type Obj = Record<string, unknown>;

interface LegacyClientOptions {
  /** The client's name (also the agent process's label); `client.name` overrides it in the file. */
  name: string;
  backendUrls: string | string[];
  /** Attributes of the `client` scope, over the harness's defaults (deep for socket, http_socket, keepalive). */
  client?: Obj;
  /** The `checks` scope; written to checks.json when given. */
  checks?: Obj;
  /** More files of the directory: name → JSON document. */
  files?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  extraArgs?: string[];
  /** Reuse a directory (a restart); default a fresh one. */
  configDir?: string;
  cacheDir?: string;
  logLevel?: string;
}

interface LegacyClientProc extends AgentProc {
  configDir: string;
  socketPort: number;
  httpPort: number;
  /** http://127.0.0.1:<http socket port> */
  httpUrl: string;
}

const obj = (x: unknown): Obj => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Obj) : {});

export async function startLegacyClient(o: LegacyClientOptions): Promise<LegacyClientProc> {
  const given = o.client ?? {};
  const [socketPort, httpPort] = await freePorts(2);
  const socket = { port: socketPort, ...obj(given.socket) };
  const httpSocket = { port: httpPort, ...obj(given.http_socket) };
  const client = {
    name: o.name,
    subscriptions: [],
    ...given,
    socket,
    http_socket: httpSocket,
    keepalive: { interval: 1, ...obj(given.keepalive) },
  };
  const configDir = o.configDir ?? tempDir(`legacy-${o.name}`);
  writeFileSync(join(configDir, 'client.json'), JSON.stringify({ client }, null, 2));
  if (o.checks) writeFileSync(join(configDir, 'checks.json'), JSON.stringify({ checks: o.checks }, null, 2));
  for (const [file, doc] of Object.entries(o.files ?? {}))
    writeFileSync(join(configDir, file), JSON.stringify(doc, null, 2));
  const agent = await startAgent({
    name: o.name,
    backendUrls: o.backendUrls,
    env: o.env,
    cacheDir: o.cacheDir,
    logLevel: o.logLevel,
    extraArgs: ['--legacy-config', configDir, ...(o.extraArgs ?? [])],
  });
  const sp = socket.port as number;
  const hp = httpSocket.port as number;
  return { ...agent, configDir, socketPort: sp, httpPort: hp, httpUrl: `http://127.0.0.1:${hp}` };
}
