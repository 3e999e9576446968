/**
 * Launches a real backend process: bin/monitor-backend start ...
 *
 * External mode (o.etcdUrl and o.natsUrl given): the backend uses those.
 * Embedded mode (neither given): the backend runs its own etcd and NATS on
 * free loopback ports.
 *
 * `backend.options` holds the options with every port and the state dir filled
 * in, so `startBackend(old.options)` restarts "the same" backend after a
 * stop or kill (same ports, same state dir).
 */
import * as assert from 'uvu/assert';
import { getJson, getJsonTls, type ClientTls, type JsonResponse } from './http.ts';
import { freePort } from './ports.ts';
import { Proc, type ProcExit } from './proc.ts';
import { tempDir } from './tmp.ts';
import { BACKEND_BIN } from './programs.ts';

export { BACKEND_BIN };

interface BackendOptions {
  name: string;
  /** External etcd, e.g. startEtcd().url. Give it together with natsUrl. */
  etcdUrl?: string;
  /** External NATS, e.g. startNats().url. */
  natsUrl?: string;
  /** Reuse a state dir (restart tests); default a fresh tempDir. */
  stateDir?: string;
  /** Reuse ports (restart tests); default free ports. */
  apiPort?: number;
  agentPort?: number;
  /** The legacy API's port (default a free one; 0 turns it off). */
  legacyPort?: number;
  /** Embedded mode only: reuse the embedded etcd/NATS ports. */
  etcdClientPort?: number;
  etcdPeerPort?: number;
  natsPort?: number;
  /** Default 'debug'. */
  logLevel?: string;
  /** --cluster-lease-ttl in seconds, default 5. */
  leaseTtl?: number;
  extraArgs?: string[];
  env?: Record<string, string | undefined>;
  /** How long to wait for GET /health == 200; default 30000. */
  readyTimeoutMs?: number;
  /**
   * The REST API serves HTTPS (the caller gives --cert-file and --key-file in extraArgs): the harness
   * trusts `ca` (and presents `cert`/`key` when given) for its own calls.
   */
  apiTls?: ClientTls;
  /** Run `monitor-backend init` (admin + API key) once ready; default true. */
  init?: boolean;
  /** More flags for that init, such as the credentials or TLS files of the external etcd. */
  initArgs?: string[];
}

/** The administrator every harness cluster is initialized with. */
export const ADMIN = {
  username: 'admin',
  password: 'P@ssw0rd!admin',
  apiKey: '5f0c8f4e-1c5e-4b7e-9d3a-0a1b2c3d4e5f',
} as const;
export const adminAuth = { Authorization: `Key ${ADMIN.apiKey}` };

export interface Backend {
  name: string;
  /** http://127.0.0.1:<apiPort> (https with apiTls) */
  apiUrl: string;
  /** ws://127.0.0.1:<agentPort> */
  agentUrl: string;
  apiPort: number;
  agentPort: number;
  /** http://127.0.0.1:<legacyPort>, the legacy API (port 4567 in production). */
  legacyUrl: string;
  legacyPort: number;
  stateDir: string;
  /** Embedded mode: the URLs it was told to listen on. */
  embedded?: { etcdClientUrl: string; etcdPeerUrl: string; natsListen: string };
  /** The resolved options (all ports and the state dir filled in), for a restart. */
  options: BackendOptions;
  proc: Proc;
  /** getJson(apiUrl + path, init). */
  get<B = any>(path: string, init?: Parameters<typeof getJson>[1]): Promise<JsonResponse<B>>;
  /** GET /health. */
  health(): Promise<JsonResponse>;
  /** GET /ready (2 s timeout). */
  ready(): Promise<JsonResponse>;
  /** The JSON log lines so far (stderr and stdout). */
  logs(): Record<string, any>[];
  /** SIGTERM, wait up to timeoutMs (default 10 s), then SIGKILL. */
  stop(timeoutMs?: number): Promise<ProcExit>;
  /**
   * Sends `signal` to the backend's process group. For SIGKILL/SIGTERM/SIGINT
   * it waits for the exit; SIGSTOP/SIGCONT return right away.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startBackend(o: BackendOptions): Promise<Backend> {
  const apiPort = o.apiPort ?? (await freePort());
  const agentPort = o.agentPort ?? (await freePort());
  const legacyPort = o.legacyPort ?? (await freePort());
  const stateDir = o.stateDir ?? tempDir(`backend-${o.name}`);
  const external = o.etcdUrl !== undefined || o.natsUrl !== undefined;
  if (external && (o.etcdUrl === undefined || o.natsUrl === undefined)) {
    throw new Error('startBackend: give both etcdUrl and natsUrl (external mode) or neither (embedded mode)');
  }
  const options: BackendOptions = { ...o, apiPort, agentPort, legacyPort, stateDir };
  const args = [
    'start',
    '--name',
    o.name,
    '--state-dir',
    stateDir,
    '--api-host',
    '127.0.0.1',
    '--api-port',
    String(apiPort),
    '--agent-host',
    '127.0.0.1',
    '--agent-port',
    String(agentPort),
    '--legacy-api-host',
    '127.0.0.1',
    '--legacy-api-port',
    String(legacyPort),
    '--log-level',
    o.logLevel ?? 'debug',
    '--cluster-lease-ttl',
    String(o.leaseTtl ?? 5),
  ];
  let embedded: Backend['embedded'];
  if (external) {
    args.push('--etcd-client-urls', o.etcdUrl!, '--nats-url', o.natsUrl!);
  } else {
    const etcdClientPort = o.etcdClientPort ?? (await freePort());
    const etcdPeerPort = o.etcdPeerPort ?? (await freePort());
    const natsPort = o.natsPort ?? (await freePort());
    Object.assign(options, { etcdClientPort, etcdPeerPort, natsPort });
    embedded = {
      etcdClientUrl: `http://127.0.0.1:${etcdClientPort}`,
      etcdPeerUrl: `http://127.0.0.1:${etcdPeerPort}`,
      natsListen: `127.0.0.1:${natsPort}`,
    };
    args.push(
      '--etcd-listen-client-urls',
      embedded.etcdClientUrl,
      '--etcd-listen-peer-urls',
      embedded.etcdPeerUrl,
      '--nats-listen',
      embedded.natsListen,
    );
  }
  args.push(...(o.extraArgs ?? []));

  const proc = Proc.start(`backend:${o.name}`, BACKEND_BIN, args, { env: o.env });
  const apiUrl = `${o.apiTls ? 'https' : 'http'}://127.0.0.1:${apiPort}`;
  const call = (url: string, init: Parameters<typeof getJson>[1] = {}): Promise<JsonResponse> => {
    if (!o.apiTls) return getJson(url, init);
    const { method, headers, body } = init;
    return getJsonTls(url, o.apiTls, {
      method,
      headers: headers as Record<string, string> | undefined,
      body: body as string | object | undefined,
    });
  };
  const backend: Backend = {
    name: o.name,
    apiUrl,
    agentUrl: `ws://127.0.0.1:${agentPort}`,
    apiPort,
    agentPort,
    legacyUrl: `http://127.0.0.1:${legacyPort}`,
    legacyPort,
    stateDir,
    embedded,
    options,
    proc,
    // As the administrator unless the caller sends its own Authorization.
    get: (path, init) =>
      call(apiUrl + path, {
        ...init,
        headers: { ...adminAuth, ...(init?.headers as Record<string, string> | undefined) },
      }),
    health: () => call(`${apiUrl}/health`, { signal: AbortSignal.timeout(5000) }),
    ready: () => call(`${apiUrl}/ready`, { signal: AbortSignal.timeout(2000) }),
    logs: () => proc.jsonLines(),
    stop: (timeoutMs = 10_000) => proc.stop(timeoutMs),
    kill: (signal: NodeJS.Signals = 'SIGKILL') => proc.send(signal),
  };

  const timeoutMs = o.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (!proc.running) {
      await proc.drained();
      throw new Error(
        `backend ${o.name} exited before becoming ready (code=${proc.exit?.code} signal=${proc.exit?.signal})\n` +
          `command: ${BACKEND_BIN} ${args.join(' ')}\nlast lines:\n${proc.tail(40)}`,
      );
    }
    try {
      const res = await call(`${apiUrl}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) {
        if (o.init !== false)
          await initCluster(external ? o.etcdUrl! : embedded!.etcdClientUrl, o.initArgs ?? []);
        return backend;
      }
      last = `status ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(
        `backend ${o.name} not ready after ${timeoutMs}ms (last /health: ${last})\n` +
          `command: ${BACKEND_BIN} ${args.join(' ')}\nlast lines:\n${proc.tail(40)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `monitor-backend init` against a cluster's etcd, as the harness administrator (idempotent). */
async function initCluster(etcdUrl: string, extraArgs: string[]): Promise<void> {
  const proc = Proc.start('init', BACKEND_BIN, [
    'init',
    '--etcd-client-urls',
    etcdUrl,
    '--cluster-admin-username',
    ADMIN.username,
    '--cluster-admin-password',
    ADMIN.password,
    '--cluster-admin-api-key',
    ADMIN.apiKey,
    '--ignore-already-initialized',
    ...extraArgs,
  ]);
  const exit = await proc.exited;
  if (exit.code !== 0) throw new Error(`monitor-backend init failed (code ${exit.code}):\n${proc.tail(20)}`);
}

/**
 * Stops the backend and checks its whole output, once it has stopped so nothing written late
 * escapes, for every one of `secrets` (passwords, seeds, tokens); returns that output.
 */
export async function stopAndAssertNoSecret(b: Backend, secrets: string[]): Promise<string> {
  await b.stop();
  const output = b.proc.lines().join('\n');
  assert.ok(output.length > 0);
  for (const s of secrets) assert.not.ok(output.includes(s), `the output holds a secret (${s.length} chars)`);
  return output;
}
