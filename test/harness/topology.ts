/**
 * The `make cluster` topology for tests: a three-member etcd cluster, a three-node NATS JetStream
 * cluster, three backends (`--nats-replicas 3`, given every etcd and NATS URL) and HAProxy in front
 * of them (REST and agent WebSocket frontends from deploy/local/cluster/haproxy-config.ts). Clients
 * go through HAProxy, as they would in production; the helpers below find and break single parts.
 *
 * Backends keep their ports and state dirs across restarts, so HAProxy's configuration (written
 * once) stays right and a restarted node revokes the lease its previous run held.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startBackend, type Backend } from './backend.ts';
import { startEtcdCluster, type EtcdCluster } from './etcd-cluster.ts';
import { waitFor } from './http.ts';
import { startHaproxy, type Haproxy } from './haproxy.ts';
import { startNatsCluster, type NatsCluster } from './nats-cluster.ts';
import { freePort } from './ports.ts';

interface TopologyOptions {
  /** Backend names; default b1, b2, b3. */
  backends?: string[];
  /** --cluster-lease-ttl in seconds; default 5. */
  leaseTtl?: number;
  /** Default 'info' (debug lines of three busy nodes cost CPU and memory). */
  logLevel?: string;
  /** More flags for every backend. */
  extraArgs?: string[];
}

export interface Topology {
  etcd: EtcdCluster;
  nats: NatsCluster;
  haproxy: Haproxy;
  /** The live backend of each name (replaced on restart), in name order. */
  backends: Map<string, Backend>;
  names: string[];
  /** The REST and agent frontends of HAProxy. */
  apiUrl: string;
  agentUrl: string;
  backend(name: string): Backend;
  /** Sends `signal` to a backend (SIGKILL and SIGTERM wait for its exit). */
  signalBackend(name: string, signal: NodeJS.Signals): Promise<void>;
  /** Starts a backend again with its former ports and state dir, and waits for its /health. */
  restartBackend(name: string): Promise<Backend>;
  /** Waits until every live backend is healthy, sees `members` members, answers /ready 200, and HAProxy counts it up. */
  waitServing(what: string, timeoutMs?: number): Promise<void>;
  /** Writes the output of every backend process started so far (restarts included) to `<dir>/<name>-<n>.log`. */
  dumpLogs(dir: string): string[];
  /** Stops HAProxy, the backends, NATS and etcd (in that order, each bounded). */
  stop(): Promise<void>;
}

export async function startTopology(o: TopologyOptions = {}): Promise<Topology> {
  const names = o.backends ?? ['b1', 'b2', 'b3'];
  const [etcd, nats] = await Promise.all([startEtcdCluster({ size: 3 }), startNatsCluster({ size: 3 })]);
  const backends = new Map<string, Backend>();
  /** Every backend process, for dumpLogs: a restarted backend has a new one. */
  const procs: Array<{ name: string; proc: Backend['proc'] }> = [];
  let haproxy: Haproxy | undefined;

  const launch = async (name: string, options?: Backend['options']) => {
    const b = await startBackend(
      options ?? {
        name,
        etcdUrl: etcd.urls.join(','),
        natsUrl: nats.urls.join(','),
        apiPort: await freePort(),
        agentPort: await freePort(),
        logLevel: o.logLevel ?? 'info',
        leaseTtl: o.leaseTtl ?? 5,
        extraArgs: ['--nats-replicas', '3', ...(o.extraArgs ?? [])],
        readyTimeoutMs: 90_000,
      },
    );
    backends.set(name, b);
    procs.push({ name, proc: b.proc });
    return b;
  };

  const stopAll = async () => {
    await haproxy?.stop().catch(() => {});
    await Promise.all([...backends.values()].map((b) => b.proc.kill().catch(() => {})));
    await Promise.all([nats.stopAll().catch(() => {}), etcd.stopAll().catch(() => {})]);
  };

  try {
    // The first backend creates the replicated buckets and streams; the others find them.
    await launch(names[0]!);
    await Promise.all(names.slice(1).map((n) => launch(n)));
    haproxy = await startHaproxy({
      backends: names.map((n) => ({
        name: n,
        apiPort: backends.get(n)!.apiPort,
        agentPort: backends.get(n)!.agentPort,
      })),
    });
  } catch (err) {
    await stopAll();
    throw err;
  }
  const proxy = haproxy;

  const t: Topology = {
    etcd,
    nats,
    haproxy: proxy,
    backends,
    names,
    apiUrl: proxy.apiUrl,
    agentUrl: proxy.agentUrl,
    backend(name) {
      const b = backends.get(name);
      if (!b) throw new Error(`no backend ${name}`);
      return b;
    },
    async signalBackend(name, signal) {
      await t.backend(name).kill(signal);
    },
    async restartBackend(name) {
      const old = t.backend(name);
      if (old.proc.running) await old.proc.kill();
      // The cluster is initialised already: skip `init` (a node process that costs CPU during a fault).
      return launch(name, { ...old.options, init: false });
    },
    async waitServing(what, timeoutMs = 60_000) {
      await waitFor(
        // Each miss is thrown with its reason, so a timeout says which node was not serving and why.
        async () => {
          for (const b of backends.values()) {
            const h = await b.health();
            if (h.status !== 200 || h.body?.members?.length !== names.length)
              throw new Error(`${b.name}: /health ${h.status}, ${h.body?.members?.length ?? '?'} members`);
            const r = await b.get('/ready');
            if (r.status !== 200)
              throw new Error(`${b.name}: /ready ${r.status} ${JSON.stringify(r.body?.reasons ?? r.body)}`);
          }
          const up = await proxy.upServers('be_agents');
          if (up.length !== names.length) throw new Error(`HAProxy sees ${up.join(', ') || 'no server'} up`);
          return true;
        },
        { timeoutMs, intervalMs: 250, what },
      );
    },
    dumpLogs(dir) {
      const files = procs.map(({ name, proc }, i) => {
        const file = path.join(dir, `${name}-${i}.log`);
        fs.writeFileSync(file, proc.lines().join('\n') + '\n');
        return file;
      });
      // HAProxy's own log, when MONITOR_TEST_HAPROXY_LOG=1 turned it on (test/harness/haproxy.ts).
      if (proxy.proc.lineCount > 0) {
        const file = path.join(dir, 'haproxy.log');
        fs.writeFileSync(file, proxy.proc.lines().join('\n') + '\n');
        files.push(file);
      }
      return files;
    },
    stop: stopAll,
  };
  return t;
}
