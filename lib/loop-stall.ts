import type { Logger } from './log.ts';

const DEFAULTS = {
  /** How often the watcher's timer is due. */
  everyMs: 100,
  /** A timer this late means the event loop was held: every socket and timer waited as long. */
  reportOverMs: 1000,
} as const;

/**
 * Logs a warning each time the event loop was held for more than a second: nothing else on the
 * node (sockets, timers, the lease keepalive) ran meanwhile, which is what an operator needs to
 * know when agents or balancers report a silent node (docs/operations.md#failures). Returns the stop.
 */
export function watchLoopStalls(
  log: Logger,
  opts: { everyMs?: number; reportOverMs?: number } = {},
): () => void {
  const everyMs = opts.everyMs ?? DEFAULTS.everyMs;
  const reportOverMs = opts.reportOverMs ?? DEFAULTS.reportOverMs;
  let due = performance.now() + everyMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const lateMs = now - due;
    due = now + everyMs;
    if (lateMs > reportOverMs) log.warn('event loop held', { ms: Math.round(lateMs + everyMs) });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
