/**
 * Shared set-up of the benchmarks: a fresh etcd and nats-server from the test harness, process
 * ids to meter, and one place that stops everything a benchmark started (also on failure).
 */
import { fileURLToPath } from 'node:url';
import { startEtcd, startNats, type EtcdServer, type NatsServer } from '../../test/harness/index.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Infra { etcd: EtcdServer; nats: NatsServer }

export async function startInfra(): Promise<Infra> {
  const [etcd, nats] = await Promise.all([startEtcd({ name: 'bench-etcd' }), startNats()]);
  return { etcd, nats };
}

/** Stop functions run in reverse order of registration; errors are reported, not thrown. */
export class Cleanup {
  private steps: Array<[string, () => Promise<unknown>]> = [];
  add(what: string, fn: () => Promise<unknown>): void { this.steps.push([what, fn]); }
  async run(): Promise<void> {
    for (const [what, fn] of this.steps.reverse()) {
      try { await fn(); } catch (err) { process.stderr.write(`[bench] stopping ${what} failed: ${(err as Error).message}\n`); }
    }
    this.steps = [];
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
