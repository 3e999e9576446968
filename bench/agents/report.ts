/**
 * The figures of one `bench agents` run (bench/agents.ts) for N agents, and the report of every
 * run: the connect and steady-window tables, the per-run notes (failures, loop timeline, heap,
 * profiles, restart storm) and the summary lines.
 */
import { profileLines, type LoopReport } from '../lib/backend-ctl.ts';
import { summarizeHeap } from '../lib/heapsnapshot.ts';
import { fix, int, mb, ms, note, pct, secs, table } from '../lib/format.ts';
import type { WindowFigures } from '../lib/procstat.ts';
import type { BenchResult } from '../lib/result.ts';
import type { AgentsConfig } from './config.ts';
import { describeFailures, type ConnectFigures } from './connect.ts';

export interface RunFigures {
  n: number;
  /** The first agent alone: its handshake pays the password KDF (cold verification cache). */
  firstHandshakeMs: number;
  /** The other N-1 agents, verification cache warm. */
  connect?: ConnectFigures;
  /** CPU of the backend and of this process while the N-1 connected. */
  connectCpu?: WindowFigures;
  opened: number;
  backendConnected: number;
  backendConnectedSeconds: number;
  firstKeepalivesSeconds: number;
  window?: WindowFigures;
  keepalivesSent: number;
  appliedPerSec: number;
  closedInWindow: number;
  loop: { p99Max: number; p99Median: number; max: number };
  idle: { rss: number; afterGc?: LoopReport };
  loaded: { afterGc?: LoopReport };
  backendFds?: number;
  clientFds?: number;
  /** Per 5 s of the window: worst event-loop delay / longest GC pause, ms. */
  loopTimeline?: string;
  gcTotalMs?: number;
  /** Heap snapshot of the backend after the window (--heap). */
  heap?: string;
  /** CPU profile of the backend while the N-1 agents connected (--profile). */
  connectProfile?: string;
  /** CPU profile of the backend over the steady window (--profile). */
  profile?: string;
  /** Reconnect of every agent to a restarted backend (cold verification cache). */
  storm?: ConnectFigures & { backendConnected: number };
  error?: string;
}

export function agentsReport(results: RunFigures[], cfg: AgentsConfig): BenchResult {
  const lines: string[] = [
    `one backend (log level warn), external etcd + nats-server; agents in this process over ws://, keepalive every ${cfg.intervalSeconds} s (phases spread)`,
    `connect: the first agent alone (pays the password KDF), then the other N-1 with ${cfg.connectConcurrency} in flight (verification cache warm)`,
    `steady window ${cfg.steadySeconds} s; CPU in % of one core; RSS sampled every second (avg / max); RSS/agent = RSS growth after forced GC / agents;`,
    `loop = backend event-loop delay p99 per 5 s (median / worst) and max (bench/lib/loop-lag-preload.mjs)`,
    '',
  ];
  const summary: string[] = [];
  const p = (f: RunFigures, name: string) => f.window?.procs[name];
  lines.push(
    table(
      [
        'agents',
        'open',
        'first agent',
        'connect N-1',
        'per s',
        'CPU backend/client',
        'handshake p50/p99',
        'backend sees',
        'first KA applied',
        'KA applied/s',
        'KA sent/s',
        'closed',
      ],
      results.map((f) => [
        int(f.n),
        int(f.opened),
        ms(f.firstHandshakeMs),
        secs(f.connect?.seconds ?? NaN),
        int((f.connect?.opened ?? NaN) / (f.connect?.seconds ?? NaN)),
        `${pct(f.connectCpu?.procs.backend?.cpuPct ?? NaN)} / ${pct(f.connectCpu?.procs.client?.cpuPct ?? NaN)}`,
        `${ms(f.connect?.handshake.p50 ?? NaN)} / ${ms(f.connect?.handshake.p99 ?? NaN)}`,
        int(f.backendConnected),
        secs(f.firstKeepalivesSeconds),
        fix(f.appliedPerSec, 0),
        fix(f.keepalivesSent / cfg.steadySeconds, 0),
        int(f.closedInWindow),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    table(
      [
        'agents',
        'backend CPU',
        'backend RSS avg/max',
        'idle RSS',
        'RSS after GC',
        'heap used/total after GC',
        'RSS/agent',
        'loop p99 (med/worst)',
        'loop max',
        'nats CPU',
        'nats RSS',
        'etcd CPU',
        'etcd RSS',
        'client CPU',
        'steal',
      ],
      results.map((f) => {
        const b = p(f, 'backend');
        const perAgent =
          f.loaded.afterGc && f.idle.afterGc
            ? ((f.loaded.afterGc.rss_mb - f.idle.afterGc.rss_mb) * 1024) / Math.max(1, f.opened)
            : NaN;
        return [
          int(f.n),
          pct(b?.cpuPct ?? NaN),
          `${mb(b?.rssAvgMb ?? NaN)} / ${mb(b?.rssMaxMb ?? NaN)}`,
          mb(f.idle.rss),
          mb(f.loaded.afterGc?.rss_mb ?? NaN),
          `${mb(f.loaded.afterGc?.heap_used_mb ?? NaN)} / ${mb(f.loaded.afterGc?.heap_total_mb ?? NaN)}`,
          Number.isFinite(perAgent) ? `${fix(perAgent, 1)} KB` : '-',
          `${ms(f.loop.p99Median)} / ${ms(f.loop.p99Max)}`,
          ms(f.loop.max),
          pct(p(f, 'nats')?.cpuPct ?? NaN),
          mb(p(f, 'nats')?.rssAvgMb ?? NaN),
          pct(p(f, 'etcd')?.cpuPct ?? NaN),
          mb(p(f, 'etcd')?.rssAvgMb ?? NaN),
          pct(p(f, 'client')?.cpuPct ?? NaN),
          pct(f.window?.stealPct ?? NaN),
        ];
      }),
    ),
  );
  for (const f of results) {
    if (f.connect?.failed.size)
      lines.push(`N=${f.n}: connection failures: ${describeFailures(f.connect.failed)}`);
    if (f.error) lines.push(`N=${f.n}: FAILED: ${f.error}`);
    if (f.loopTimeline)
      lines.push(
        `N=${f.n}: per 5 s, worst loop delay / longest GC pause (ms): ${f.loopTimeline}; GC total ${int(f.gcTotalMs ?? NaN)} ms in ${cfg.steadySeconds} s`,
      );
    if (f.heap) {
      note(`agents N=${f.n}: summarizing the heap snapshot ${f.heap}`);
      try {
        lines.push('', `N=${f.n}: backend heap after the window by constructor (self size): ${f.heap}`);
        lines.push(
          table(
            ['self MB', 'count', 'per agent', 'constructor / type'],
            summarizeHeap(f.heap, 25).map((h) => [
              fix(h.selfMb, 1),
              int(h.count),
              fix(h.count / f.n, 1),
              h.name,
            ]),
          ),
        );
      } catch (err) {
        lines.push(`heap summary failed: ${(err as Error).message}`);
      }
    }
    if (f.backendFds !== undefined)
      lines.push(
        `N=${f.n}: open fds at the end of the window: backend ${f.backendFds}, client ${f.clientFds}`,
      );
    if (f.storm) {
      lines.push(
        `N=${f.n}: restart storm: backend restarted, ${int(f.storm.opened)}/${int(f.n)} agents reconnected in ${secs(f.storm.seconds)} (${cfg.connectConcurrency} in flight, cold verification cache), ` +
          `handshake p50 ${ms(f.storm.handshake.p50)} p99 ${ms(f.storm.handshake.p99)}; backend sees ${int(f.storm.backendConnected)}${f.storm.failed.size ? `; failures: ${describeFailures(f.storm.failed)}` : ''}`,
      );
    }
    const b = p(f, 'backend');
    const goal =
      f.n >= 10_000 && b
        ? `  goal (<500 MB, <20%): ${b.rssMaxMb < 500 && b.cpuPct < 20 ? 'met' : 'NOT met'}`
        : '';
    summary.push(
      f.error && !b
        ? `agents N=${int(f.n).padEnd(6)} FAILED with ${int(f.opened)} connected: ${f.error}`
        : `agents N=${int(f.n).padEnd(6)} connected ${int(f.opened)}/${int(f.n)} in ${secs((f.connect?.seconds ?? NaN) + f.firstHandshakeMs / 1000)} (backend sees ${int(f.backendConnected)})  backend RSS ${mb(b?.rssAvgMb ?? NaN)} (max ${mb(b?.rssMaxMb ?? NaN)}, after GC ${mb(f.loaded.afterGc?.rss_mb ?? NaN)})  CPU ${pct(b?.cpuPct ?? NaN)}  nats ${pct(p(f, 'nats')?.cpuPct ?? NaN)}  etcd ${pct(p(f, 'etcd')?.cpuPct ?? NaN)}  ${fix(f.appliedPerSec, 0)} KA/s  loop p99 ${ms(f.loop.p99Max)}  others ${pct(f.window?.othersPct ?? NaN)}${goal}${f.error ? `  (error: ${f.error})` : ''}`,
    );
    if (f.profile) {
      lines.push('', `N=${f.n}: profile of the backend over the steady window:`, ...profileLines(f.profile));
    }
    if (f.connectProfile) {
      lines.push(
        '',
        `N=${f.n}: profile of the backend while the agents connected:`,
        ...profileLines(f.connectProfile),
      );
    }
    if (f.storm)
      summary.push(
        `agents N=${int(f.n).padEnd(6)} restart storm: ${int(f.storm.opened)}/${int(f.n)} reconnected in ${secs(f.storm.seconds)} (cold auth cache, handshake p99 ${ms(f.storm.handshake.p99)})`,
      );
  }
  return { title: 'agents: simulated agents over WebSocket against one backend', lines, summary };
}
