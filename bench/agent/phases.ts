/**
 * The measured phases of the agent benchmark, each on agents/backends set up by index.ts:
 * idle CPU/RSS, POST /events closed loop (accepted and stored+acknowledged per second), and the
 * outbox drain once a backend comes back.
 */
import type { AgentProc, Backend } from '../../test/harness/index.ts';
import { drive, type DriveResult } from '../lib/drive.ts';
import { int, note } from '../lib/format.ts';
import { sleep } from '../lib/infra.ts';
import { ProcMeter, type WindowFigures } from '../lib/procstat.ts';
import { EventPoster } from './post.ts';
import { storedCount, waitStored } from './stored.ts';

export async function idleWindow(
  agent: AgentProc,
  settleSeconds: number,
  seconds: number,
): Promise<WindowFigures> {
  note(`agent: settling ${settleSeconds} s, then idle for ${seconds} s`);
  await sleep(settleSeconds * 1000);
  const meter = new ProcMeter({ agent: agent.proc.pid }, 500).start();
  await sleep(seconds * 1000);
  return meter.stop();
}

interface PostFigures {
  drive: DriveResult;
  statuses: Map<string, number>;
  /** Events stored by the backend during the measured window, per second. */
  storedRate: number;
  /** Every accepted event (warm-up included), and how long after the load stopped the last was stored. */
  accepted: number;
  drainAfterSeconds: number;
  /** Accepted events / time from the first POST until the backend had them all. */
  endToEndRate: number;
}

export async function postPhase(
  agent: AgentProc,
  backend: Backend,
  o: { connections: number; warmupSeconds: number; seconds: number; pids: Record<string, number> },
): Promise<PostFigures> {
  const prefix = 'post-';
  const poster = new EventPoster(agent.apiUrl, o.connections, prefix);
  let stored0 = 0,
    stored1 = 0,
    t0 = 0,
    t1 = 0;
  const start = performance.now();
  note(
    `agent: POST /events over ${o.connections} connections, ${o.warmupSeconds} s warm-up + ${o.seconds} s`,
  );
  try {
    const d = await drive({
      concurrency: o.connections,
      warmupMs: o.warmupSeconds * 1000,
      measureMs: o.seconds * 1000,
      send: poster.send,
      pids: o.pids,
      onWindowStart: async () => {
        stored0 = await storedCount(backend, agent.name, prefix);
        t0 = performance.now();
      },
      onWindowEnd: async () => {
        stored1 = await storedCount(backend, agent.name, prefix);
        t1 = performance.now();
      },
    });
    const loadEnd = performance.now();
    note(`agent: ${int(poster.accepted)} events accepted; waiting for the backend to store them all`);
    const done = await waitStored(backend, agent.name, prefix, poster.accepted, 300_000);
    return {
      drive: d,
      statuses: poster.statuses,
      storedRate: (stored1 - stored0) / ((t1 - t0) / 1000),
      accepted: poster.accepted,
      drainAfterSeconds: (done - loadEnd) / 1000,
      endToEndRate: poster.accepted / ((done - start) / 1000),
    };
  } finally {
    poster.close();
  }
}

/** Queues `n` events through POST /events as fast as `connections` connections go; accepted/s. */
export async function fill(
  agent: AgentProc,
  prefix: string,
  n: number,
  connections: number,
): Promise<{ accepted: number; seconds: number; rate: number; statuses: Map<string, number> }> {
  const poster = new EventPoster(agent.apiUrl, connections, prefix);
  const t = performance.now();
  let failures = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (poster.accepted < n) {
          try {
            await poster.send();
          } catch (err) {
            if (++failures > 100) throw err;
            await sleep(10);
          }
        }
      }),
    );
  } finally {
    poster.close();
  }
  const seconds = (performance.now() - t) / 1000;
  return { accepted: poster.accepted, seconds, rate: poster.accepted / seconds, statuses: poster.statuses };
}

interface DrainFigures {
  events: number;
  /** From the backend's start (its process spawned) to the first stored event seen, and to the last. */
  firstAfterSeconds: number;
  allAfterSeconds: number;
  /** Events stored after the first poll that saw any / (last - that poll). */
  rate: number;
  window: WindowFigures;
}

/** Waits for `n` queued events to reach `backend`, started at `up` (performance.now()); the drain rate. */
export async function drainPhase(
  agent: AgentProc,
  backend: Backend,
  prefix: string,
  n: number,
  up: number,
  pids: Record<string, number>,
): Promise<DrainFigures> {
  const meter = new ProcMeter(pids).start();
  let first = NaN,
    firstCount = 0;
  const done = await waitStored(backend, agent.name, prefix, n, 300_000, (count, t) => {
    if (count > 0 && Number.isNaN(first)) {
      first = t;
      firstCount = count;
    }
  });
  const window = meter.stop();
  if (Number.isNaN(done))
    throw new Error(`outbox drain: the backend did not get all ${n} events within 300 s`);
  return {
    events: n,
    firstAfterSeconds: (first - up) / 1000,
    allAfterSeconds: (done - up) / 1000,
    rate: (n - firstCount) / ((done - first) / 1000),
    window,
  };
}
