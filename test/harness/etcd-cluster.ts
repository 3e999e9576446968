/**
 * A three-member (or n-member) etcd cluster for tests, on free loopback ports.
 *
 * Static bootstrap: every member is started with the same --initial-cluster, all at once (a member
 * of a new static cluster waits for its peers). Data dirs come from tempDir (on /dev/shm when it has
 * room). `restart()` starts a member again with the same flags and data dir, which makes it rejoin:
 * etcd ignores the initial-cluster flags once its data dir holds a member. Ready means every running
 * member answers GET /health with {"health":"true"} (it has a leader and can commit).
 */
import { freePort } from './ports.ts';
import { Proc, sleep } from './proc.ts';
import { etcdBinary } from './etcd.ts';
import { tempDir } from './tmp.ts';

interface EtcdClusterOptions {
  /** Number of members; default 3. */
  size?: number;
  /** How long start()/restart() wait for health; default 30000. */
  readyTimeoutMs?: number;
}

interface EtcdClusterMember {
  /** Member name, e.g. "e1". */
  name: string;
  /** http://127.0.0.1:<clientPort> */
  url: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  /** The current process (a new one after restart()). */
  readonly proc: Proc;
  readonly running: boolean;
  /** SIGKILL; waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** Starts the member again (same flags, same data dir; kills it first if it runs) and waits for its health. */
  restart(): Promise<void>;
  /** GET /health: true when {"health":"true"}. */
  healthy(): Promise<boolean>;
}

export interface EtcdCluster {
  /** Every member's client URL, in member order. */
  urls: string[];
  members: EtcdClusterMember[];
  /** Waits until every running member reports healthy. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** The member that leads the raft group, as a running member reports it; undefined when none. */
  leader(): Promise<EtcdClusterMember | undefined>;
  /** Stops every member (SIGTERM, then SIGKILL). */
  stopAll(): Promise<void>;
}

const HTTP_TIMEOUT_MS = 2000;
let clusters = 0;

/** POST to etcd's JSON gateway (v3 API over HTTP); undefined when the member does not answer. */
async function gateway(url: string, path: string): Promise<any> {
  try {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      body: '{}',
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}

class Member implements EtcdClusterMember {
  readonly url: string;
  private current: Proc | undefined;

  constructor(
    readonly name: string,
    readonly clientPort: number,
    readonly peerPort: number,
    readonly dataDir: string,
    private readonly args: string[],
    private readonly readyTimeoutMs: number,
  ) {
    this.url = `http://127.0.0.1:${clientPort}`;
  }

  get proc(): Proc {
    if (!this.current) throw new Error(`etcd member ${this.name} was never started`);
    return this.current;
  }
  get running(): boolean {
    return this.current?.running ?? false;
  }

  spawn(): void {
    // ETCD_* variables from the environment would silently change the flags.
    const env: Record<string, string | undefined> = {};
    for (const k of Object.keys(process.env)) if (k.startsWith('ETCD_')) env[k] = undefined;
    this.current = Proc.start(`etcd:${this.name}:${this.clientPort}`, etcdBinary(), this.args, { env });
  }

  async kill(): Promise<void> {
    await this.current?.kill();
  }
  async stop(): Promise<void> {
    await this.current?.stop(5000);
  }

  async restart(): Promise<void> {
    if (this.current?.running) await this.current.kill();
    this.spawn();
    await this.waitHealthy(this.readyTimeoutMs);
  }

  async healthy(): Promise<boolean> {
    try {
      const res = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
      return ((await res.json()) as { health?: string }).health === 'true';
    } catch {
      return false;
    }
  }

  /** Member id as etcd numbers it (a decimal string in the JSON gateway). */
  async status(): Promise<{ memberId: string; leader: string } | undefined> {
    const s = await gateway(this.url, '/v3/maintenance/status');
    const memberId = s?.header?.member_id;
    const leader = s?.leader;
    return typeof memberId === 'string' && typeof leader === 'string' ? { memberId, leader } : undefined;
  }

  async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const p = this.proc;
      if (!p.running) {
        await p.drained();
        throw new Error(
          `etcd member ${this.name} exited (code=${p.exit?.code} signal=${p.exit?.signal}); last lines:\n${p.tail(40)}`,
        );
      }
      if (await this.healthy()) return;
      if (Date.now() > deadline)
        throw new Error(
          `etcd member ${this.name} not healthy after ${timeoutMs}ms; last lines:\n${p.tail(40)}`,
        );
      await sleep(150);
    }
  }
}

/** Starts `size` etcd members as one static cluster and waits until every member is healthy. */
export async function startEtcdCluster(opts: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const size = opts.size ?? 3;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const plan: Array<{ name: string; clientPort: number; peerPort: number; dataDir: string }> = [];
  for (let i = 1; i <= size; i++) {
    plan.push({
      name: `e${i}`,
      clientPort: await freePort(),
      peerPort: await freePort(),
      dataDir: tempDir(`etcd-cluster-e${i}`),
    });
  }
  const initialCluster = plan.map((p) => `${p.name}=http://127.0.0.1:${p.peerPort}`).join(',');
  // A token unique to this cluster, so members of two test clusters can never merge.
  const token = `monitor-test-${process.pid}-${++clusters}-${Date.now()}`;
  const members = plan.map((p) => {
    const client = `http://127.0.0.1:${p.clientPort}`;
    const peer = `http://127.0.0.1:${p.peerPort}`;
    const args = [
      '--name',
      p.name,
      '--data-dir',
      p.dataDir,
      '--listen-client-urls',
      client,
      '--advertise-client-urls',
      client,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      initialCluster,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      token,
      // Fast failure detection on loopback: a dead leader is replaced in about a second.
      '--heartbeat-interval',
      '100',
      '--election-timeout',
      '1000',
      '--log-level',
      'error',
      '--logger',
      'zap',
    ];
    return new Member(p.name, p.clientPort, p.peerPort, p.dataDir, args, readyTimeoutMs);
  });
  for (const m of members) m.spawn();

  const cluster: EtcdCluster = {
    urls: members.map((m) => m.url),
    members,

    async waitHealthy(timeoutMs = readyTimeoutMs) {
      await Promise.all(members.filter((m) => m.running).map((m) => m.waitHealthy(timeoutMs)));
    },

    async leader() {
      for (const m of members.filter((x) => x.running)) {
        const s = await m.status();
        if (!s || s.leader === '0') continue;
        for (const other of members.filter((x) => x.running)) {
          if ((await other.status())?.memberId === s.leader) return other;
        }
      }
      return undefined;
    },

    async stopAll() {
      await Promise.all(members.map((m) => m.stop()));
    },
  };

  try {
    await cluster.waitHealthy(readyTimeoutMs);
  } catch (err) {
    await Promise.all(members.map((m) => m.kill()));
    throw err;
  }
  return cluster;
}
