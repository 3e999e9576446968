/**
 * One fault of the chaos suite from start to verdict: start a phase with the load running, break
 * something and heal it (the fault's own function), wait until the cluster serves again, quiesce the
 * load, read the store back and judge the phase's operations; the result is one table row.
 */
import { sleep, type Topology } from '../harness/index.ts';
import type { Load } from './load/index.ts';
import type { AlertWatch } from './checker/alerts.ts';
import type { EventOp, History } from './checker/history.ts';
import { reconnects, schedule } from './checker/figures.ts';
import type { Row } from './checker/table.ts';
import { verify } from './checker/verify.ts';

export interface Ctx {
  topo: Topology;
  load: Load;
  history: History;
  watch: AlertWatch;
  leaseTtl: number;
  tickCheck: string;
  tickIntervalS: number;
  warningS: number;
  /** Agents the test closed for good: their alerts are expected. */
  dead: Set<string>;
  /** Extra steady load before each fault (CHAOS_SOAK_S), in ms. */
  steadyMs: number;
  /** Where the history is dumped after each fault (a post-mortem survives a suite timeout). */
  historyFile: string;
  /** Problems already reported by an earlier fault's row, so a later row counts only new ones. */
  reported: Set<unknown>;
}

export interface FaultOutcome {
  notes: string[];
  failures: string[];
  /** Agents must be back within this long (none: not asserted, e.g. the whole cluster was down). */
  reconnectBoundMs?: number;
  /** Agents that died in this fault and whose alert never came. */
  missed?: number;
}

/** How long the load may take to drain after a fault (agents back off up to 10 s between resends). */
const QUIESCE_MS = 40_000;

export async function runFault(ctx: Ctx, name: string, fault: () => Promise<FaultOutcome>): Promise<Row> {
  const { history, load, topo } = ctx;
  const phase = history.setPhase(name);
  load.resume();
  await sleep(5000 + ctx.steadyMs);
  const out = await fault();
  await topo.waitServing(`the cluster to serve again after ${name}`);
  // A few seconds of load on the healed cluster belong to the fault too: they show it really healed.
  await sleep(3000);
  const left = await load.quiesce(QUIESCE_MS);
  const end = Date.now();
  await ctx.watch.poll();
  const verdict = await verify(topo.apiUrl, history.ops);
  history.dump(ctx.historyFile);
  const mine = <T extends { phase: string }>(xs: T[]) => xs.filter((x) => x.phase === name);
  const acked = mine(verdict.acked);
  const lost = mine(verdict.lost);
  const doubled = verdict.doubled.filter((d) => d.op.phase === name);
  const rc = reconnects(history, phase.start, end, ctx.dead);
  const sched = schedule(history, ctx.tickCheck, phase.start, end);
  const spurious = ctx.watch
    .spurious(ctx.dead)
    .filter((a) => a.executed * 1000 >= phase.start - 1000 && a.executed * 1000 < end);
  const seconds = (end - phase.start) / 1000;

  const failures = [...out.failures];
  if (acked.length === 0) failures.push('no event was acknowledged: the load never reached the cluster');
  if (lost.length)
    failures.push(
      `${lost.length} acknowledged events lost, e.g. ${lost.slice(0, 5).map(describe).join('; ')}`,
    );
  if (doubled.length)
    failures.push(
      `${doubled.length} events applied twice, e.g. ${doubled
        .slice(0, 5)
        .map((d) => `${describe(d.op)} x${d.times}`)
        .join('; ')}`,
    );
  const earlier =
    verdict.doubled.filter((d) => d.op.phase !== name).length + verdict.lost.length - lost.length;
  if (earlier) failures.push(`${earlier} events of earlier phases lost or doubled (seen now)`);
  if (verdict.unreadable.length) failures.push(`${verdict.unreadable.length} acknowledged events unreadable`);
  if (verdict.refusedButStored.length)
    failures.push(`${verdict.refusedButStored.length} refused events stored`);
  if (verdict.overApplied.length)
    failures.push(`occurrences beyond history: ${verdict.overApplied.slice(0, 3).join('; ')}`);
  if (verdict.phantoms.length)
    failures.push(`phantom history entries: ${verdict.phantoms.slice(0, 3).join('; ')}`);
  if (spurious.length)
    failures.push(
      `${spurious.length} spurious keepalive alerts: ${spurious
        .slice(0, 5)
        .map((a) => `${a.agent} status ${a.status} at ${new Date(a.executed * 1000).toISOString()}`)
        .join('; ')}`,
    );
  if (sched.doubled.length)
    failures.push(`check requests delivered twice: ${sched.doubled.slice(0, 5).join(', ')}`);
  if (out.reconnectBoundMs !== undefined && rc.maxMs > out.reconnectBoundMs)
    failures.push(
      `an agent took ${rc.maxMs} ms to reconnect (bound ${out.reconnectBoundMs} ms): ${rc.slowest}`,
    );
  if (out.missed) failures.push(`${out.missed} dead agents got no keepalive alert`);

  const bySource = (ops: Array<{ source: string }>) =>
    `agent ${ops.filter((o) => o.source === 'agent').length}, rest ${ops.filter((o) => o.source === 'rest').length}`;
  const notes = [
    ...(lost.length || doubled.length
      ? [`lost: ${bySource(lost)}; doubled: ${bySource(doubled.map((d) => d.op))}`]
      : []),
    `${(acked.length / seconds).toFixed(0)} acked/s over ${seconds.toFixed(0)}s`,
    `${rc.count} reconnects`,
    ...(left ? [`${left} still unanswered after ${QUIESCE_MS / 1000}s`] : []),
    ...out.notes,
  ];
  return {
    fault: name,
    acked: acked.length,
    lost: lost.length,
    doubled: doubled.length,
    reconnectP50Ms: rc.p50Ms,
    reconnectMaxMs: rc.maxMs,
    scheduleGapMs: sched.maxGapMs,
    spurious: spurious.length,
    missed: out.missed,
    notes: notes.join('; '),
    failures,
  };
}

function describe(op: EventOp): string {
  const t = (ms?: number) => (ms ? new Date(ms).toISOString().slice(11, 23) : '-');
  return `${op.source} ${op.entity}/${op.check} token ${op.token} [${op.phase}] sent ${t(op.invokedAt)}, ${op.outcome ?? 'open'} ${t(op.completedAt)}${op.node ? ` by ${op.node}` : ''} (${op.attempts} sends)`;
}
