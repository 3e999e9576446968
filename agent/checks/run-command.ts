import { spawn } from 'node:child_process';

// Runs one check or hook command the way the reference does (3.9): through the shell, stdout and
// stderr combined in arrival order, in its own process group so a timeout kills everything the
// command started, not just the shell.

export const TIMED_OUT_OUTPUT = 'Execution timed out\n';
/** Output kept in memory per command; an event must still fit in one frame (1 MB). */
export const MAX_CAPTURE_BYTES = 512 * 1024;
/** After the group is killed, how long to wait for the pipes to close (a child may have left the group). */
const CLOSE_GRACE_MS = 1000;

export interface CommandSpec {
  command: string;
  env: Record<string, string | undefined>;
  /** Seconds; 0 or absent means none. */
  timeout?: number;
  /** Written to stdin, which is then closed; no stdin at all otherwise. */
  stdin?: string;
  /** Aborting kills the process group (the agent is stopping); the result has `cancelled`. */
  signal?: AbortSignal;
}

export interface CommandResult {
  status: number;
  output: string;
  /** Seconds, fractional. */
  duration: number;
  /** Unix seconds at start. */
  executed: number;
  timedOut: boolean;
  cancelled?: boolean;
}

export function runCommand(spec: CommandSpec): Promise<CommandResult> {
  const startedAt = Date.now();
  const executed = Math.floor(startedAt / 1000);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let captured = 0;
    let done = false;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    let cancelled = false;
    const finish = (status: number, prefix = '') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(grace);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({ status, output: prefix + Buffer.concat(chunks).toString('utf8'), duration: (Date.now() - startedAt) / 1000, executed, timedOut, ...(cancelled ? { cancelled } : {}) });
    };
    let child;
    try {
      child = spawn('/bin/sh', ['-c', spec.command], {
        env: spec.env, detached: true, stdio: [spec.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      resolve({ status: 3, output: `cannot run the command: ${(e as Error).message}`, duration: (Date.now() - startedAt) / 1000, executed, timedOut: false });
      return;
    }
    const collect = (b: Buffer) => {
      if (captured >= MAX_CAPTURE_BYTES) return;
      const part = b.subarray(0, MAX_CAPTURE_BYTES - captured);
      chunks.push(part);
      captured += part.length;
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('error', (e) => finish(3, `cannot run the command: ${e.message}`));
    if (spec.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => { /* the command need not read its stdin (EPIPE) */ });
      child.stdin.end(spec.stdin);
    }
    const killGroup = () => {
      try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    };
    if (spec.timeout && spec.timeout > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        killGroup();
        grace = setTimeout(() => finish(2, TIMED_OUT_OUTPUT), CLOSE_GRACE_MS);
      }, spec.timeout * 1000);
    }
    function onAbort() {
      cancelled = true;
      killGroup();
      grace = setTimeout(() => finish(3), CLOSE_GRACE_MS);
    }
    if (spec.signal?.aborted) onAbort(); else spec.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (code: number | null, signal: NodeJS.Signals | null) => {
      if (timedOut) return finish(2, TIMED_OUT_OUTPUT);
      if (cancelled) return finish(3);
      if (code !== null) return finish(code);
      finish(3, signal ? `command killed by signal ${signal}\n` : '');
    };
    child.on('close', settle);
    // A background child that keeps the pipes open must not hold the result (and the check) forever.
    child.on('exit', (code, signal) => { if (!timedOut) grace = setTimeout(() => settle(code, signal), CLOSE_GRACE_MS); });
  });
}
