/**
 * Shared set-up of the benchmarks: a fresh etcd and nats-server from the test harness, process
 * ids to meter, and one place that stops everything a benchmark started (also on failure).
 */
import { fileURLToPath } from 'node:url';
import {
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  type Backend,
  type EtcdServer,
  type NatsServer,
} from '../../test/harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Infra {
  etcd: EtcdServer;
  nats: NatsServer;
}

export async function startInfra(): Promise<Infra> {
  const [etcd, nats] = await Promise.all([startEtcd({ name: 'bench-etcd' }), startNats()]);
  return { etcd, nats };
}

/**
 * etcd, nats-server and one backend (log level warn) on them, registered with `cleanup`; resolves
 * once the backend owns every shard. `env` goes to the backend (e.g. instrumentation().env).
 */
export async function startInfraAndBackend(
  name: string,
  cleanup: Cleanup,
  env?: Record<string, string>,
): Promise<{ infra: Infra; backend: Backend }> {
  const infra = await startInfra();
  cleanup.add('etcd', () => infra.etcd.stop());
  cleanup.add('nats', () => infra.nats.stop());
  const backend = await startBackend({
    name,
    etcdUrl: infra.etcd.url,
    natsUrl: infra.nats.url,
    logLevel: 'warn',
    readyTimeoutMs: 60_000,
    ...(env ? { env } : {}),
  });
  cleanup.add('backend', () => backend.stop(20_000));
  await waitFor(async () => (await backend.health()).body?.shards?.owned === SHARD_COUNT, {
    timeoutMs: 60_000,
    what: 'the backend to own every shard',
  });
  return { infra, backend };
}

/** Stop functions run in reverse order of registration; errors are reported, not thrown. */
export class Cleanup {
  private steps: Array<[string, () => Promise<unknown>]> = [];
  add(what: string, fn: () => Promise<unknown>): void {
    this.steps.push([what, fn]);
  }
  async run(): Promise<void> {
    for (const [what, fn] of this.steps.reverse()) {
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`[bench] stopping ${what} failed: ${(err as Error).message}\n`);
      }
    }
    this.steps = [];
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
