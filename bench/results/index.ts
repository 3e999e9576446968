/**
 * Result ingest (issue 5): N simulated agents over real WebSockets send check results (`event`
 * frames with `check.executed` and a unique id), W un-acked per agent in flight (closed loop); the
 * backend acks each only once it is durable. Acked results/s over a steady window after warm-up,
 * send-to-ack latency ("execution to stored"), non-ok acks, CPU/RSS. One run per backend count
 * (default 1 and 3 backends on one etcd + nats-server; agents round-robin over the backends).
 */
import { int, mb, ms, pct, table } from '../lib/format.ts';
import type { BenchResult } from '../lib/result.ts';
import { GOAL_P99_MS, GOAL_RATE, type ResultsConfig } from './config.ts';
import { runOne, type RunFigures } from './run-one.ts';

export { resultsConfig, type ResultsConfig } from './config.ts';

const codes = (m: Map<string, number>) => [...m].map(([k, v]) => `${k} x${int(v)}`).join(', ');

export async function runResults(cfg: ResultsConfig): Promise<BenchResult> {
  const runs: RunFigures[] = [];
  for (const n of cfg.nodes) runs.push(await runOne(n, cfg));

  const lines: string[] = [
    `${int(cfg.agents)} simulated agents in this process over ws:// (JSON frames), ${cfg.checks} checks each, window ${cfg.window} un-acked events per agent (closed loop);`,
    `backends log level warn on one external etcd + nats-server; agents round-robin over the backends; all processes share this machine's cores;`,
    `steady window ${cfg.seconds} s after ${cfg.warmupSeconds} s warm-up; latency = send (simulated execution) to ack (durable); CPU in % of one core`,
    '',
  ];
  const cpuSum = (f: RunFigures, prefix: string) => {
    const ps = Object.entries(f.window?.procs ?? {}).filter(([k]) => k.startsWith(prefix));
    return ps.length ? ps.reduce((s, [, p]) => s + p.cpuPct, 0) : NaN;
  };
  const rssList = (f: RunFigures) =>
    Object.entries(f.window?.procs ?? {})
      .filter(([k]) => k.startsWith('backend'))
      .map(([, p]) => mb(p.rssMaxMb))
      .join(' / ');
  lines.push(
    table(
      [
        'backends',
        'agents open',
        'acked/s',
        'p50',
        'p90',
        'p99',
        'max',
        'non-ok',
        'backend CPU (sum)',
        'backend RSS max',
        'nats CPU',
        'etcd CPU',
        'client CPU',
        'others',
        'steal',
        'closed',
        'unacked at end',
      ],
      runs.map((f) => [
        String(f.nodes),
        int(f.opened),
        int(f.rate),
        ms(f.latency.p50),
        ms(f.latency.p90),
        ms(f.latency.p99),
        ms(f.latency.max),
        int(f.notOk),
        pct(cpuSum(f, 'backend')),
        rssList(f) || '-',
        pct(cpuSum(f, 'nats')),
        pct(cpuSum(f, 'etcd')),
        pct(cpuSum(f, 'client')),
        pct(f.window?.othersPct ?? NaN),
        pct(f.window?.stealPct ?? NaN),
        int(f.closed),
        int(f.lost),
      ]),
    ),
  );
  for (const f of runs) {
    if (f.nodes > 1 && f.window)
      lines.push(
        `${f.nodes} backends, CPU each: ${Object.entries(f.window.procs)
          .filter(([k]) => k.startsWith('backend'))
          .map(([k, p]) => `${k} ${pct(p.cpuPct)}`)
          .join(', ')}`,
      );
    if (f.notOkCodes.size) lines.push(`${f.nodes} backend(s): non-ok ack codes: ${codes(f.notOkCodes)}`);
    if (f.unknown) lines.push(`${f.nodes} backend(s): ${int(f.unknown)} acks for ids not in flight`);
    if (f.error) lines.push(`${f.nodes} backend(s): FAILED: ${f.error}`);
  }
  lines.push('');
  const summary: string[] = [];
  const figures: Record<string, number> = {};
  for (const f of runs) {
    if (f.nodes === 1 && !f.error) {
      figures.results_rate = f.rate;
      figures.results_p99_ms = f.latency.p99;
    }
    const rateMet = f.rate >= GOAL_RATE,
      p99Met = f.latency.p99 < GOAL_P99_MS;
    const head = `results ${f.nodes} backend${f.nodes > 1 ? 's' : ''} (${int(cfg.agents)} agents x W=${cfg.window})`;
    lines.push(
      `goal ${head}: >= ${int(GOAL_RATE)}/s ${rateMet ? 'met' : 'NOT met'} (${int(f.rate)}/s); p99 < ${GOAL_P99_MS} ms ${p99Met ? 'met' : 'NOT met'} (${ms(f.latency.p99)})`,
    );
    summary.push(
      f.error
        ? `${head}: FAILED: ${f.error}`
        : `${head}: ${int(f.rate)}/s acked  p50 ${ms(f.latency.p50)}  p99 ${ms(f.latency.p99)}  max ${ms(f.latency.max)}  non-ok ${int(f.notOk)}  backend CPU ${pct(cpuSum(f, 'backend'))}  nats ${pct(cpuSum(f, 'nats'))}  ` +
            `goal >= ${int(GOAL_RATE)}/s: ${rateMet ? 'met' : 'NOT met'}; p99 < ${GOAL_P99_MS} ms: ${p99Met ? 'met' : 'NOT met'}`,
    );
  }
  if (cfg.nodes.some((n) => n > 1))
    lines.push(
      `note: the multi-backend run shares the same cores as the one-backend run (a per-node figure, not added capacity)`,
    );
  for (const f of runs)
    if (f.profile)
      lines.push(
        '',
        `CPU profile of backend 0 over the steady window (${f.nodes} backend(s)):`,
        ...f.profile,
      );
  return {
    title: 'results: check results stored per second over WebSocket (issue 5)',
    lines,
    summary,
    figures,
  };
}
