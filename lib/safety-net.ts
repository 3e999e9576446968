import type { Logger } from './log.ts';
import { scrubUrlCredentials } from './url-credentials.ts';

// The last resort for errors no code path caught, installed by each program as it starts.
//
// - An unhandled rejection is a promise nobody awaited or caught. The operation it belonged to has
//   failed, but nothing was unwound half-way (the rejection only travelled along its own promise
//   chain), so the process is as sound as after any caught error: it is logged and the program runs
//   on. Node's default (crash) would let one forgotten `.catch` take a whole node or agent down.
// - An uncaught exception was thrown out of a callback (a timer, an event emitter, a socket) and
//   unwound it mid-way: a counter not decremented, a slot held, a socket half set up. Nothing will
//   repair that, and Node documents resuming as unsafe. So it is logged and the program stops with
//   a non-zero status through `onUncaught` (the program's own orderly stop, bounded in time): its
//   supervisor restarts it, and meanwhile other backend nodes take over its shards and jobs, and an
//   agent's events wait in its on-disk outbox.

/** Exit status after an uncaught exception: EX_SOFTWARE. */
export const UNCAUGHT_EXIT_CODE = 70;

const DEFAULTS = {
  /** An orderly stop after an uncaught exception may hang on the very state it broke: cut short after this. */
  uncaughtStopMs: 30_000,
} as const;

/** What a log line may say about a thrown value: an Error's name, message and frames; else only its type. */
function describe(reason: unknown): Record<string, unknown> {
  if (reason instanceof Error) {
    // The stack's first line repeats the message; only the frames are kept.
    const frames = (reason.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
    return {
      error: scrubUrlCredentials(reason.message),
      name: reason.name,
      stack: scrubUrlCredentials(frames.join('\n')),
    };
  }
  // A thrown string or object may be anything, a payload or a token among them: not logged.
  return { error: `non-Error value thrown (${reason === null ? 'null' : typeof reason})` };
}

/**
 * Installs the process-wide handlers. `onUncaught` stops the program (with a non-zero status); it
 * runs once, later uncaught exceptions are only logged while it works.
 */
export function installSafetyNet(
  log: Logger,
  onUncaught: () => void = () => process.exit(UNCAUGHT_EXIT_CODE),
): void {
  // Node writes its warnings (a dependency's deprecations among them, such as the TLS client of
  // etcd's gRPC naming an IP address as server name) as plain text on stderr, where a program's log
  // is JSON lines: they are logged instead, once per code, since some repeat per connection.
  process.removeAllListeners('warning');
  const warned = new Set<string>();
  process.on('warning', (w: Error & { code?: string }) => {
    const key = w.code ?? `${w.name}: ${w.message}`;
    if (warned.has(key)) return;
    warned.add(key);
    log.warn('node warning', { name: w.name, code: w.code, warning: scrubUrlCredentials(w.message) });
  });
  process.on('unhandledRejection', (reason) => {
    log.error('unhandled promise rejection; running on', describe(reason));
  });
  let stopping = false;
  process.on('uncaughtException', (err) => {
    log.error('uncaught exception; stopping', describe(err));
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(UNCAUGHT_EXIT_CODE), DEFAULTS.uncaughtStopMs);
    onUncaught();
  });
}
