/**
 * Check TTL lateness on one backend (external etcd + nats-server, log level warn): N proxy entities
 * (BENCH_TTL_SWITCHES, default 1,000) each get one result with `ttl` (BENCH_TTL_SECONDS, default 10)
 * through the REST API, posted over 32 concurrent requests, so the deadlines fall in a burst about
 * as long as the posting took. Each expiry is logged by the entity actor with `late_ms` = the start
 * of its turn minus its deadline (timer heap tick + mailbox wait; the commit is not included).
 * Reports p50/p99/max lateness of the first expiry of every switch (goal p99 < 50 ms) and checks that
 * each switch fired exactly once in its first ttl.
 */
import { waitFor } from '../test/harness/index.ts';
import { int, ms, note } from './lib/format.ts';
import { Cleanup, startInfraAndBackend } from './lib/infra.ts';
import type { BenchResult } from './lib/result.ts';
import { percentile } from './lib/stats.ts';

export interface TtlConfig {
  switches: number;
  ttl: number;
  concurrency: number;
}

const GOAL_P99_MS = 50;

export function ttlConfig(): TtlConfig {
  const num = (name: string, dflt: number) => {
    const v = Number(process.env[name] ?? dflt);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
    return v;
  };
  return {
    switches: num('BENCH_TTL_SWITCHES', 1000),
    ttl: Math.max(5, num('BENCH_TTL_SECONDS', 10)),
    concurrency: 32,
  };
}

export async function runTtl(cfg: TtlConfig): Promise<BenchResult> {
  const cleanup = new Cleanup();
  try {
    note('ttl: starting etcd, nats-server and the backend');
    const { backend } = await startInfraAndBackend('bench-ttl', cleanup);

    const prefix = `ttl${Date.now().toString(36)}`;
    const names = Array.from({ length: cfg.switches }, (_, i) => `${prefix}-${i}`);
    note(`ttl: arming ${int(cfg.switches)} switches with ttl ${cfg.ttl} s`);
    const postStart = Date.now();
    let next = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: cfg.concurrency }, async () => {
        while (next < names.length) {
          const n = names[next++]!;
          const r = await backend.get(`/api/core/v2/namespaces/default/events/${n}/dms`, {
            method: 'POST',
            body: { check: { status: 0, output: 'ok', ttl: cfg.ttl } },
          });
          if (r.status !== 201) refused++;
        }
      }),
    );
    const postSeconds = (Date.now() - postStart) / 1000;
    if (refused) throw new Error(`${refused} POSTs refused`);

    const wanted = new Set(names);
    const firstLate = new Map<string, number>();
    const fired = new Map<string, number>();
    const collect = () => {
      firstLate.clear();
      fired.clear();
      for (const l of backend.logs()) {
        if (l.msg !== 'check ttl expired' || !wanted.has(l.entity)) continue;
        fired.set(l.entity, (fired.get(l.entity) ?? 0) + 1);
        if (!firstLate.has(l.entity)) firstLate.set(l.entity, Number(l.late_ms));
      }
      return firstLate.size;
    };
    await waitFor(async () => (collect() === cfg.switches ? true : undefined), {
      timeoutMs: (cfg.ttl + postSeconds + 30) * 1000,
      intervalMs: 500,
      what: 'every switch to fire',
    });
    const late = [...firstLate.values()].sort((a, b) => a - b);
    // Before a second ttl has passed since the last post, each must have fired exactly once.
    const doubled = [...fired.values()].filter((c) => c > 1).length;
    const p50 = percentile(late, 50);
    const p99 = percentile(late, 99);
    const ok = p99 < GOAL_P99_MS && doubled === 0;
    const lines = [
      `switches: ${int(cfg.switches)}, ttl ${cfg.ttl} s, armed over ${postSeconds.toFixed(1)} s (${cfg.concurrency} concurrent POSTs)`,
      `expiry lateness (turn start - deadline): p50 ${ms(p50)}, p99 ${ms(p99)}, max ${ms(late[late.length - 1]!)}  (goal p99 < ${GOAL_P99_MS} ms)`,
      `fired more than once in the first ttl: ${doubled}`,
    ];
    return {
      title: 'ttl: check TTL expiry lateness, one node',
      lines,
      figures: { ttl_late_p99_ms: p99, ttl_doubled: doubled },
      summary: [
        `ttl: ${int(cfg.switches)} switches, lateness p50 ${ms(p50)} p99 ${ms(p99)}${ok ? '' : ' FAILED (goal p99 < 50 ms, each once)'}`,
      ],
    };
  } finally {
    await cleanup.run();
  }
}
