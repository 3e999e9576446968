/**
 * One timed start of a backend on a cluster whose etcd and nats-server keep running: the running
 * backend is stopped (gracefully, so its lease and shard owner keys go with it), then a fresh
 * process with the same options is spawned and watched until every milestone was seen.
 */
import { startBackend, type Backend } from '../../../test/harness/index.ts';
import fs from 'node:fs';
import { instrumentation, stopProfile } from '../../lib/backend-ctl.ts';
import { watchStart, type Milestones } from './milestones.ts';

export interface StartRun {
  /** Absent when the start failed (`failed` says why). */
  milestones?: Milestones;
  failed?: string;
  /** How long the graceful stop of the previous backend took, ms. */
  stopMs: number;
  /** The backend's own start time of each service (its `service started` log lines), in start order. */
  services: Array<{ service: string; ms: number }>;
  /** With `profile`: the .cpuprofile from the process's first line until every milestone was seen (or it exited). */
  profileFile?: string;
}

interface RestartOptions {
  expectEvents: number;
  timeoutMs: number;
  leaseTtlSeconds: number;
  /** CPU-profile the new process from its first line until every milestone was seen. */
  profile?: boolean;
}

function serviceTimes(b: Backend): StartRun['services'] {
  return b
    .logs()
    .filter((l) => l.msg === 'service started' && typeof l.service === 'string')
    .map((l) => ({ service: l.service as string, ms: Number(l.ms) }));
}

/** The first line of an error, with the first error the backend logged (the harness quotes its last lines). */
function failure(message: string): string {
  const head = message.split('\n')[0] ?? message;
  for (const line of message.split('\n')) {
    if (!line.includes('"level":"error"')) continue;
    try {
      const l = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
      return `${head}; first error logged: ${String(l.msg)} (${String(l.reason ?? l.error ?? '')})`;
    } catch {
      /* not a whole JSON line */
    }
  }
  // The harness quotes the process's last lines: its last word says what ended it.
  const last = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('{') && !l.startsWith('at '))
    .at(-1);
  return last && last !== head ? `${head}; last line: ${last}` : head;
}

/** Stops `previous` and times a new backend in its place; resolves with it, running. */
export async function timedRestart(
  previous: Backend,
  o: RestartOptions,
): Promise<{ backend: Backend; run: StartRun }> {
  const stopStart = performance.now();
  await previous.stop(20_000);
  const stopMs = performance.now() - stopStart;

  // Profiled: the preload starts the profiler before the backend's own code loads.
  const ctl = o.profile ? instrumentation({ profileFromStart: true }) : undefined;
  const extra = process.env.BENCH_BACKEND_NODE_OPTIONS;
  const env =
    ctl?.env ?? (extra ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${extra}`.trim() } : {});
  // Every port is given, so the process is spawned before startBackend's first await: spawnedAt is
  // the moment of the spawn, give or take a microsecond.
  const spawnedAt = performance.now();
  const starting = startBackend({
    ...previous.options,
    // Info: the backend then logs the start time of each of its services.
    logLevel: 'info',
    init: false,
    leaseTtl: o.leaseTtlSeconds,
    readyTimeoutMs: o.timeoutMs,
    env,
  });
  let milestones: Milestones;
  try {
    milestones = await Promise.race([
      watchStart(previous.apiUrl, spawnedAt, o.expectEvents, o.timeoutMs),
      // A process that exits while starting ends the watch at once.
      starting.then(() => new Promise<never>(() => {})),
    ]);
  } catch (err) {
    const b = await starting.catch(() => undefined);
    await b?.stop(20_000);
    // The stopped `previous` stands in for the next restart: its options are what matters.
    const failed = failure((err as Error).message);
    // A profiled start that failed wrote its profile as it exited.
    const atExit = ctl?.env.BENCH_PROF_EXIT_FILE;
    const profileFile = atExit && fs.existsSync(atExit) ? atExit : undefined;
    return {
      backend: b ?? previous,
      run: { failed, stopMs, services: b ? serviceTimes(b) : [], ...(profileFile ? { profileFile } : {}) },
    };
  }
  const backend = await starting;
  // Stopped once every milestone was seen: the profile covers the start and nothing after it.
  const profileFile = ctl ? await stopProfile(backend, ctl, 'backend-start') : undefined;
  return { backend, run: { milestones, stopMs, services: serviceTimes(backend), profileFile } };
}
