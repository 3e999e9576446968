/**
 * Closed-loop load: `concurrency` workers each send one request, wait for its answer, send the
 * next. A warm-up phase first (not counted), then a measured window during which completions,
 * latencies and the CPU/RSS of the given processes are recorded.
 */
import { ProcMeter, type WindowFigures } from './procstat.ts';
import { Samples } from './stats.ts';

export interface DriveResult {
  concurrency: number;
  seconds: number;
  ok: number;
  errors: number;
  firstError?: string;
  rate: number;
  latency: ReturnType<Samples['summary']>;
  window: WindowFigures;
}

interface DriveOptions {
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  /** Sends one request; resolves when it is answered. */
  send: () => Promise<unknown>;
  /** Processes to meter over the window, by name. */
  pids: Record<string, number>;
  /** Called right before and after the measured window (e.g. to read server counters). */
  onWindowStart?: () => Promise<void> | void;
  onWindowEnd?: () => Promise<void> | void;
  /** Stop early when this many errors happened (the server is gone); default 1000. */
  maxErrors?: number;
}

export async function drive(o: DriveOptions): Promise<DriveResult> {
  // An object, so TypeScript does not narrow the phase across the awaits below.
  const st: { phase: 'warm' | 'measure' | 'done' } = { phase: 'warm' };
  const lat = new Samples();
  let ok = 0,
    errors = 0,
    allErrors = 0;
  let firstError: string | undefined;
  const maxErrors = o.maxErrors ?? 1000;

  const worker = async () => {
    while (st.phase !== 'done') {
      const t = performance.now();
      try {
        await o.send();
        if (st.phase === 'measure') {
          ok++;
          lat.add(performance.now() - t);
        }
      } catch (err) {
        allErrors++;
        firstError ??= (err as Error).message;
        if (st.phase === 'measure') errors++;
        if (allErrors >= maxErrors) st.phase = 'done';
        else await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
  const workers = Array.from({ length: o.concurrency }, worker);

  await new Promise((r) => setTimeout(r, o.warmupMs));
  if (st.phase !== 'done') {
    await o.onWindowStart?.();
    const meter = new ProcMeter(o.pids).start();
    const t0 = performance.now();
    st.phase = 'measure';
    await waitUntil(() => st.phase === 'done', o.measureMs);
    const stopped = (st.phase as string) === 'done';
    st.phase = 'done';
    const seconds = (performance.now() - t0) / 1000;
    const window = meter.stop();
    await o.onWindowEnd?.();
    await Promise.race([Promise.all(workers), new Promise((r) => setTimeout(r, 30_000))]);
    return {
      concurrency: o.concurrency,
      seconds,
      ok,
      errors,
      rate: ok / seconds,
      latency: lat.summary(),
      window,
      firstError: stopped ? `stopped after ${allErrors} errors; first: ${firstError}` : firstError,
    };
  }
  await Promise.race([Promise.all(workers), new Promise((r) => setTimeout(r, 30_000))]);
  throw new Error(`every request failed during warm-up (${allErrors} errors); first: ${firstError}`);
}

/** Resolves after `ms`, or earlier once `cond()` is true (checked every 50 ms). */
async function waitUntil(cond: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    const left = end - performance.now();
    if (left <= 0) return;
    await new Promise((r) => setTimeout(r, Math.min(50, left)));
  }
}
