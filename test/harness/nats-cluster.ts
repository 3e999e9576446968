/**
 * A three-node (or n-node) NATS JetStream cluster for tests, on free loopback ports.
 *
 * Each node gets a generated config file (server_name, client listen, HTTP monitoring port, cluster
 * routes to every node, jetstream store_dir) in a temp dir of its own, so `restart()` brings the very
 * same server back: same ports, same store, same config. Kill/stop/restart act on one node; the
 * others keep running. Nodes are ready when their `/healthz` answers ok (in 2.9 that means JetStream
 * is up, knows a meta leader and every stream and consumer placed on it is current) and some node
 * reports a meta leader in `/jsz`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './ports.ts';
import { Proc, sleep } from './proc.ts';
import { natsBinary } from './nats.ts';
import { tempDir } from './tmp.ts';

interface NatsClusterOptions {
  /** Number of nodes; default 3. */
  size?: number;
  /** Cluster name; default "monitor-test". */
  clusterName?: string;
  /** How long start()/restart() wait for health; default 30000. */
  readyTimeoutMs?: number;
}

interface NatsClusterNode {
  /** server_name, e.g. "n1". */
  name: string;
  /** nats://127.0.0.1:<port> */
  url: string;
  port: number;
  clusterPort: number;
  /** http://127.0.0.1:<httpPort> (monitoring: /healthz, /jsz, /varz). */
  monitorUrl: string;
  /** JetStream store_dir (nats-server keeps its files in <storeDir>/jetstream); survives restarts. */
  storeDir: string;
  /** The generated config file the node is (re)started with. */
  configFile: string;
  /** The current process (a new one after restart()). */
  readonly proc: Proc;
  readonly running: boolean;
  /** SIGKILL; waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** Starts the same server again (kills it first if it still runs) and waits until it is healthy. */
  restart(): Promise<void>;
  /** GET /healthz: true when it answers 200 {"status":"ok"}. */
  healthy(): Promise<boolean>;
}

export interface NatsCluster {
  /** Every node's client URL, in node order. */
  urls: string[];
  nodes: NatsClusterNode[];
  /** Waits until every running node is healthy and a JetStream meta leader exists. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** server_name of the JetStream meta leader, as a running node sees it; undefined when none. */
  metaLeader(): Promise<string | undefined>;
  /** server_name of the leader of `stream` (e.g. "KV_monitor_events"); undefined when none is known. */
  streamLeader(stream: string): Promise<string | undefined>;
  /** The node whose server_name is `name`. */
  node(name: string): NatsClusterNode | undefined;
  /** Stops every node (SIGTERM, then SIGKILL). */
  stopAll(): Promise<void>;
}

const HTTP_TIMEOUT_MS = 2000;

async function fetchJson(url: string): Promise<{ status: number; body: any } | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* keep the text */
    }
    return { status: res.status, body };
  } catch {
    return undefined; // down, refused or hung: the caller polls again
  }
}

interface NodeSpec {
  name: string;
  port: number;
  clusterPort: number;
  httpPort: number;
  dir: string;
  storeDir: string;
  configFile: string;
}

function configText(n: NodeSpec, clusterName: string, routes: string[]): string {
  // JSON strings are valid NATS config strings, so paths with odd characters stay quoted correctly.
  return [
    `server_name: ${JSON.stringify(n.name)}`,
    `listen: "127.0.0.1:${n.port}"`,
    `http: "127.0.0.1:${n.httpPort}"`,
    'cluster {',
    `  name: ${JSON.stringify(clusterName)}`,
    `  listen: "127.0.0.1:${n.clusterPort}"`,
    `  routes: [${routes.map((r) => JSON.stringify(r)).join(', ')}]`,
    '}',
    'jetstream {',
    `  store_dir: ${JSON.stringify(n.storeDir)}`,
    // Tests write little; a cap keeps a runaway test from filling /dev/shm.
    '  max_file_store: 1GB',
    '  max_memory_store: 256MB',
    '}',
    '',
  ].join('\n');
}

class Node implements NatsClusterNode {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly clusterPort: number;
  readonly monitorUrl: string;
  readonly storeDir: string;
  readonly configFile: string;
  private current: Proc;

  constructor(
    spec: NodeSpec,
    private readonly readyTimeoutMs: number,
  ) {
    this.name = spec.name;
    this.url = `nats://127.0.0.1:${spec.port}`;
    this.port = spec.port;
    this.clusterPort = spec.clusterPort;
    this.monitorUrl = `http://127.0.0.1:${spec.httpPort}`;
    this.storeDir = spec.storeDir;
    this.configFile = spec.configFile;
    this.current = this.spawn();
  }

  get proc(): Proc {
    return this.current;
  }
  get running(): boolean {
    return this.current.running;
  }

  spawn(): Proc {
    this.current = Proc.start(`nats:${this.name}:${this.port}`, natsBinary(), ['-c', this.configFile]);
    return this.current;
  }

  async kill(): Promise<void> {
    await this.current.kill();
  }
  async stop(): Promise<void> {
    await this.current.stop(5000);
  }

  async restart(): Promise<void> {
    if (this.current.running) await this.current.kill();
    this.spawn();
    await this.waitHealthy(this.readyTimeoutMs);
  }

  async healthy(): Promise<boolean> {
    const r = await fetchJson(`${this.monitorUrl}/healthz`);
    return r?.status === 200 && r.body?.status === 'ok';
  }

  /** Polls /healthz until ok; fails early when the process exits. */
  async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      if (!this.current.running) {
        await this.current.drained();
        throw new Error(
          `nats-server ${this.name} exited (code=${this.current.exit?.code} signal=${this.current.exit?.signal}); last lines:\n${this.current.tail(40)}`,
        );
      }
      const r = await fetchJson(`${this.monitorUrl}/healthz`);
      if (r?.status === 200 && r.body?.status === 'ok') return;
      last = r ? `${r.status} ${JSON.stringify(r.body)}` : 'no answer';
      if (Date.now() > deadline)
        throw new Error(
          `nats-server ${this.name} not healthy after ${timeoutMs}ms (last /healthz: ${last}); last lines:\n${this.current.tail(40)}`,
        );
      await sleep(150);
    }
  }
}

/** Starts `size` nats-servers routed to each other, with JetStream, and waits until the cluster is healthy. */
export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const clusterName = opts.clusterName ?? 'monitor-test';
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const specs: NodeSpec[] = [];
  for (let i = 1; i <= size; i++) {
    const dir = tempDir(`nats-cluster-n${i}`);
    // nats-server keeps its JetStream files under <store_dir>/jetstream, next to our config file.
    const storeDir = dir;
    specs.push({
      name: `n${i}`,
      port: await freePort(),
      clusterPort: await freePort(),
      httpPort: await freePort(),
      dir,
      storeDir,
      configFile: path.join(dir, 'nats.conf'),
    });
  }
  // Every node lists every route, itself included: nats-server ignores the self-route.
  const routes = specs.map((s) => `nats-route://127.0.0.1:${s.clusterPort}`);
  for (const s of specs) fs.writeFileSync(s.configFile, configText(s, clusterName, routes));
  const nodes = specs.map((s) => new Node(s, readyTimeoutMs));

  const jsz = async (query: string): Promise<any[]> => {
    const answers = await Promise.all(
      nodes.filter((n) => n.running).map((n) => fetchJson(`${n.monitorUrl}/jsz?${query}`)),
    );
    return answers.filter((a) => a?.status === 200 && typeof a.body === 'object').map((a) => a!.body);
  };

  const cluster: NatsCluster = {
    urls: nodes.map((n) => n.url),
    nodes,
    node: (name) => nodes.find((n) => n.name === name),

    async metaLeader() {
      for (const body of await jsz('')) {
        const leader = body?.meta_cluster?.leader;
        if (typeof leader === 'string' && leader !== '') return leader;
      }
      return undefined;
    },

    async streamLeader(stream) {
      // Each node reports the streams it holds a replica of, with the leader as it knows it; the
      // leader itself is the authority, so a node naming itself wins over hearsay.
      const seen: string[] = [];
      for (const body of await jsz('accounts=true&streams=true')) {
        for (const acc of body?.account_details ?? []) {
          for (const s of acc?.stream_detail ?? []) {
            if (s?.name !== stream) continue;
            const leader = s?.cluster?.leader;
            if (typeof leader !== 'string' || leader === '') continue;
            if (leader === body.server_name) return leader;
            seen.push(leader);
          }
        }
      }
      return seen[0];
    },

    async waitHealthy(timeoutMs = readyTimeoutMs) {
      const deadline = Date.now() + timeoutMs;
      await Promise.all(nodes.filter((n) => n.running).map((n) => n.waitHealthy(timeoutMs)));
      while ((await cluster.metaLeader()) === undefined) {
        if (Date.now() > deadline) throw new Error(`no JetStream meta leader after ${timeoutMs}ms`);
        await sleep(150);
      }
    },

    async stopAll() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };

  try {
    await cluster.waitHealthy(readyTimeoutMs);
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill()));
    throw err;
  }
  return cluster;
}
