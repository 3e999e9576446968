import { spawn, type ChildProcess } from 'node:child_process';

// A command through `/bin/sh -c` in a process group of its own, so a timeout or a stop kills
// everything it started, not just the shell. Shared by the agent's checks and hooks and the
// backend's pipe mutators and handlers, which differ only in what they keep of the output.

/** After the group is killed or the shell exited, how long to wait for the pipes to close (a child may have left the group). */
const CLOSE_GRACE_MS = 1000;

/** How a run ended. `error`: the command could not be started (or the spawn failed later). */
type GroupEnd =
  | { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'timeout' }
  | { kind: 'cancelled' }
  | { kind: 'killed'; reason: string }
  | { kind: 'error'; message: string };

interface GroupSpec {
  command: string;
  env: Record<string, string | undefined>;
  /** Written to stdin, which is then closed; no stdin at all when undefined. */
  stdin?: string | Buffer;
  /** Seconds; 0 or absent means none. */
  timeout?: number;
  /** Aborting kills the group; the run ends `cancelled`. */
  signal?: AbortSignal;
  onStdout(b: Buffer): void;
  onStderr(b: Buffer): void;
}

interface GroupRun {
  end: Promise<GroupEnd>;
  /** Kills the group; the run ends `killed` with this reason. */
  kill(reason: string): void;
  /** Undefined when the spawn failed. */
  child: ChildProcess | undefined;
}

export function runInGroup(spec: GroupSpec): GroupRun {
  let child: ChildProcess | undefined;
  let kill: (reason: string) => void = () => {};
  const end = new Promise<GroupEnd>((resolve) => {
    let done = false;
    let timedOut = false;
    let cancelled = false;
    let killed: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    const finish = (e: GroupEnd) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(grace);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve(e);
    };
    try {
      child = spawn('/bin/sh', ['-c', spec.command], {
        env: spec.env,
        detached: true,
        stdio: [spec.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      finish({ kind: 'error', message: (e as Error).message });
      return;
    }
    const c = child;
    const killAndSettle = (e: GroupEnd) => {
      try {
        if (c.pid) process.kill(-c.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      clearTimeout(grace);
      grace = setTimeout(() => finish(e), CLOSE_GRACE_MS);
    };
    c.stdout!.on('data', spec.onStdout);
    c.stderr!.on('data', spec.onStderr);
    c.on('error', (e) => finish({ kind: 'error', message: e.message }));
    if (spec.stdin !== undefined && c.stdin) {
      // A command need not read its stdin: the EPIPE (or ECONNRESET) of the write is expected.
      c.stdin.on('error', () => {});
      c.stdin.end(spec.stdin);
    }
    if (spec.timeout && spec.timeout > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        killAndSettle({ kind: 'timeout' });
      }, spec.timeout * 1000);
    }
    function onAbort() {
      cancelled = true;
      killAndSettle({ kind: 'cancelled' });
    }
    kill = (reason) => {
      if (done || killed !== undefined) return;
      killed = reason;
      killAndSettle({ kind: 'killed', reason });
    };
    const settle = (code: number | null, signal: NodeJS.Signals | null) => {
      if (timedOut) return finish({ kind: 'timeout' });
      if (cancelled) return finish({ kind: 'cancelled' });
      if (killed !== undefined) return finish({ kind: 'killed', reason: killed });
      finish({ kind: 'exit', code, signal });
    };
    c.on('close', settle);
    // A background child holding the pipes open must not hold the result forever.
    c.on('exit', (code, signal) => {
      if (timedOut || cancelled || killed !== undefined || done) return;
      clearTimeout(grace);
      grace = setTimeout(() => settle(code, signal), CLOSE_GRACE_MS);
    });
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });
  });
  return {
    end,
    kill: (reason) => kill(reason),
    get child() {
      return child;
    },
  };
}
