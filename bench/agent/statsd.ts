/**
 * StatsD packets/s before loss: one agent sending to a stand-in backend (standin.ts), a forked
 * sender (statsd-sender.ts) offering counter packets at increasing rates. After each step the
 * counters the agent flushed (sum of `.value` points, flush interval 1 s) are compared with the
 * packets sent: counters are exact when they are equal.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AgentProc } from '../../test/harness/index.ts';
import { note, int } from '../lib/format.ts';
import { ProcMeter, type WindowFigures } from '../lib/procstat.ts';
import { sleep } from '../lib/infra.ts';
import type { StandIn } from './standin.ts';

const SENDER = fileURLToPath(new URL('./statsd-sender.ts', import.meta.url));
export const STATSD_PREFIX = 'bench.c';

interface StatsdStep {
  offered: number;
  /** Datagrams handed to the kernel without error, and per second. */
  sent: number;
  sendRate: number;
  sendErrors: number;
  /** The sender's own CPU while sending, % of one core (it exits before the window is read). */
  senderCpuPct: number;
  /** Sum of the counters the agent flushed for this step. */
  received: number;
  lossPct: number;
  window: WindowFigures;
}

interface SenderReport {
  sent: number;
  errors: number;
  seconds: number;
  cpuSeconds: number;
}

function runSender(
  port: number,
  rate: number,
  seconds: number,
  names: number,
): { pid: number; ready: Promise<void>; done: Promise<SenderReport> } {
  const child = fork(SENDER, [String(port), String(rate), String(seconds), String(names), STATSD_PREFIX], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let onReady = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const done = new Promise<SenderReport>((resolve, reject) => {
    let report: SenderReport | undefined;
    child.on('message', (m) => {
      if ((m as { ready?: boolean }).ready) onReady();
      else report = m as SenderReport;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      report ? resolve(report) : reject(new Error(`StatsD sender exited with ${code} and no report`)),
    );
  });
  done.finally(onReady).catch(() => {});
  return { pid: child.pid!, ready, done };
}

/** Waits until the stand-in's count stops changing for `quietMs` (the last flush has arrived). */
async function settle(standin: StandIn, target: number, quietMs: number): Promise<void> {
  let last = standin.counted,
    since = performance.now();
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    await sleep(100);
    if (standin.counted !== last) {
      last = standin.counted;
      since = performance.now();
    }
    if (standin.counted >= target && performance.now() - since > 1200) return;
    if (performance.now() - since > quietMs) return;
  }
}

export async function statsdLadder(
  agent: AgentProc,
  standin: StandIn,
  rates: number[],
  seconds: number,
  names: number,
): Promise<StatsdStep[]> {
  const steps: StatsdStep[] = [];
  for (const offered of rates) {
    await settle(standin, standin.counted, 2500);
    const before = standin.counted;
    note(`agent: StatsD ${int(offered)} packets/s for ${seconds} s`);
    const sender = runSender(agent.ports.statsd, offered, seconds, names);
    await sender.ready;
    const meter = new ProcMeter({ agent: agent.proc.pid }).start();
    const r = await sender.done;
    const window = meter.stop();
    const sent = r.sent - r.errors;
    await settle(standin, before + sent, 3000);
    const received = standin.counted - before;
    steps.push({
      offered,
      sent,
      sendRate: r.sent / r.seconds,
      sendErrors: r.errors,
      senderCpuPct: (r.cpuSeconds / r.seconds) * 100,
      received,
      lossPct: sent > 0 ? ((sent - received) / sent) * 100 : NaN,
      window,
    });
    note(`agent: StatsD ${int(offered)}/s offered: ${int(sent)} sent, ${int(received)} counted`);
  }
  return steps;
}
