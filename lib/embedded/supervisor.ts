// Runs one child process (embedded etcd or nats-server) for the lifetime of the backend: cleans up a
// child orphaned by an earlier backend, waits until it serves, restarts it when it dies, and makes
// sure it never outlives the backend, not even when the backend is SIGKILLed.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.ts';
import { cmdlineOf, isAlive, readPidFile, signal, waitGone } from './proc.ts';

interface SupervisorOptions {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  pidFile: string;
  /** Resolves true once the child serves; may throw, which counts as "not yet". */
  ready: () => Promise<boolean>;
  readyTimeoutMs: number;
  log: Logger;
  /** Strings that must all occur in /proc/<pid>/cmdline before a pid from pidFile is killed as stale. */
  matchCmdline: string[];
  /** First restart delay, doubled for every further exit within the window (tests shorten it). */
  backoffMs?: number;
}

const DEFAULTS = {
  /** Output lines of the child kept for error messages... */
  tailLines: 30,
  /** ...of which an error message quotes the last few, each cut at quotedLineChars. */
  quotedLines: 5,
  quotedLineChars: 300,
  /** More than maxCrashes exits within crashWindowMs and the child is given up. */
  crashWindowMs: 60_000,
  maxCrashes: 5,
  restartBackoffMs: 250,
  /** After SIGTERM, the child gets this long before SIGKILL; its guardian waits as long. */
  stopGraceMs: 5_000,
  readyPollMs: 100,
  staleKillWaitMs: 5_000,
  killWaitMs: 2_000,
  /** Output lines still unread when the child exits are waited for this long. */
  lastOutputWaitMs: 200,
  guardianExitWaitMs: 1_000,
} as const;

type Phase = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** One spawned incarnation of the child together with its guardian. */
interface Run {
  child: ChildProcess;
  guardian?: ChildProcess;
  guardianGone?: Promise<void>;
  ended: boolean;
  exit?: string;
  exited: Promise<void>;
}

/** Whether `p` settles within `ms`. The timer is cleared once `p` settles so it holds nothing open. */
function within(p: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export class Supervisor {
  private readonly o: SupervisorOptions;
  private phase: Phase = 'idle';
  private run?: Run;
  private readonly tail: string[] = [];
  private crashes: number[] = [];
  private restartTimer?: NodeJS.Timeout;
  private readonly fatalListeners: Array<(err: Error) => void> = [];
  private stopPromise?: Promise<void>;

  constructor(o: SupervisorOptions) {
    this.o = o;
  }

  /** Pid of the running child; undefined before start, between restarts and after stop. */
  get pid(): number | undefined {
    return this.run && !this.run.ended ? this.run.child.pid : undefined;
  }

  /** The child's last output lines, oldest first. */
  get lastOutput(): string[] {
    return [...this.tail];
  }

  /** Called once when the child keeps dying and is given up; the backend should exit then. */
  onFatal(cb: (err: Error) => void): void {
    this.fatalListeners.push(cb);
  }

  async start(): Promise<void> {
    if (this.phase !== 'idle') throw new Error(`embedded ${this.o.name} was already started`);
    this.phase = 'starting';
    let run: Run | undefined;
    try {
      await this.killStale();
      run = this.spawnRun();
      await this.waitReady(run);
    } catch (err) {
      if (run) await this.killRun(run);
      this.removePidFile();
      if (this.phase === 'starting') this.phase = 'failed';
      throw err;
    }
    if (this.phase === 'starting') this.phase = 'running';
  }

  stop(): Promise<void> {
    return (this.stopPromise ??= this.doStop());
  }

  private async doStop(): Promise<void> {
    this.phase = 'stopping';
    clearTimeout(this.restartTimer);
    const run = this.run;
    const pid = run?.child.pid;
    if (run && !run.ended && pid !== undefined) {
      signal(pid, 'SIGTERM');
      if (!(await within(run.exited, DEFAULTS.stopGraceMs))) {
        this.o.log.warn(
          `embedded ${this.o.name} did not stop within ${DEFAULTS.stopGraceMs / 1000} s; killing it`,
          { child: this.o.name, pid },
        );
        await this.killRun(run);
      }
    }
    if (run) await this.stopGuardian(run);
    this.removePidFile();
    this.phase = 'stopped';
  }

  // An earlier backend that was SIGKILLed while its guardian was also gone leaves the child running,
  // holding the ports and the data dir lock; the new child could not start beside it.
  private async killStale(): Promise<void> {
    const pid = readPidFile(this.o.pidFile);
    if (pid === undefined || pid === process.pid || !isAlive(pid)) return;
    const cmdline = cmdlineOf(pid);
    if (cmdline === undefined || !this.o.matchCmdline.every((s) => cmdline.includes(s))) {
      this.o.log.debug(`pid file of embedded ${this.o.name} names an unrelated process; leaving it alone`, {
        pid,
        pidFile: this.o.pidFile,
      });
      return;
    }
    this.o.log.warn(`killing stale embedded ${this.o.name} left by an earlier backend`, {
      child: this.o.name,
      pid,
    });
    signal(pid, 'SIGKILL');
    if (!(await waitGone(pid, DEFAULTS.staleKillWaitMs)))
      throw new Error(`stale embedded ${this.o.name} (pid ${pid}) did not die after SIGKILL`);
    rmSync(this.o.pidFile, { force: true });
  }

  private spawnRun(): Run {
    const { name, command, args, cwd, env, log } = this.o;
    // detached: its own process group, so a terminal's Ctrl-C reaches only the backend, which then
    // stops its children in order instead of having them die under it.
    const child = spawn(command, args, {
      cwd,
      env: env ?? process.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let resolveExited!: () => void;
    const run: Run = {
      child,
      ended: false,
      exited: new Promise<void>((r) => {
        resolveExited = r;
      }),
    };
    this.run = run;
    const end = (exit: string) => {
      if (run.ended) return;
      run.ended = true;
      run.exit = exit;
      void this.stopGuardian(run);
      resolveExited();
      this.onRunEnded(run);
    };
    child.on('error', (err) => {
      if (child.pid === undefined) end(`could not be run: ${err.message}`);
      else log.warn(`signalling embedded ${name} failed`, { child: name, error: err });
    });
    child.once('exit', (code, sig) => {
      // 'exit' can come before the last output lines are read; those lines are the ones that explain.
      void within(
        once(child, 'close').then(() => undefined),
        DEFAULTS.lastOutputWaitMs,
      ).then(() => end(sig ? `killed by ${sig}` : `exit code ${code}`));
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream)
        createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => this.recordLine(line));
    }
    if (child.pid !== undefined) {
      mkdirSync(dirname(this.o.pidFile), { recursive: true });
      writeFileSync(this.o.pidFile, `${child.pid}\n`);
      this.startGuardian(run, child.pid);
      log.debug(`embedded ${name} spawned`, { child: name, pid: child.pid, command, args });
    }
    return run;
  }

  // A shell whose stdin is a pipe from us: when this process dies for any reason, even SIGKILL, the
  // kernel closes the pipe, `read` sees EOF and the shell stops the child. Nothing in-process could.
  // It waits up to 5 s for the child to go after SIGTERM and sends SIGKILL only if it is still there,
  // so a pid reused meanwhile is not hit.
  private startGuardian(run: Run, pid: number): void {
    const script =
      `read -r _ ; kill -TERM ${pid} 2>/dev/null; i=0; ` +
      `while [ $i -lt ${DEFAULTS.stopGraceMs / 100} ] && kill -0 ${pid} 2>/dev/null; do sleep 0.1; i=$((i+1)); done; ` +
      `kill -0 ${pid} 2>/dev/null && kill -KILL ${pid} 2>/dev/null`;
    const guardian = spawn('sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    guardian.on('error', (err) =>
      this.o.log.warn(`guardian of embedded ${this.o.name} could not run`, {
        child: this.o.name,
        error: err,
      }),
    );
    guardian.stdin?.on('error', () => {
      /* the guardian went away; its exit handler reports it */
    });
    (guardian.stdin as Socket | null)?.unref();
    guardian.unref();
    guardian.once('exit', () => {
      if (run.guardian !== guardian) return;
      run.guardian = undefined;
      if (!run.ended)
        this.o.log.warn(
          `guardian of embedded ${this.o.name} exited; the child may outlive a crashed backend`,
          { child: this.o.name, pid },
        );
    });
    run.guardian = guardian;
  }

  /** Resolves once the guardian is gone (at most 1 s), so stop() leaves no process behind. */
  private stopGuardian(run: Run): Promise<void> {
    const guardian = run.guardian;
    if (!guardian) return run.guardianGone ?? Promise.resolve();
    run.guardian = undefined;
    const gone =
      guardian.exitCode !== null || guardian.signalCode !== null
        ? Promise.resolve()
        : within(
            once(guardian, 'exit').then(
              () => undefined,
              () => undefined,
            ),
            DEFAULTS.guardianExitWaitMs,
          ).then(() => undefined);
    // Kill before closing the pipe: an EOF would make it signal a pid that may already be reused.
    // The whole group, so a `sleep 5` it is in goes too.
    if (guardian.pid !== undefined && guardian.exitCode === null && guardian.signalCode === null) {
      try {
        process.kill(-guardian.pid, 'SIGKILL');
      } catch {
        signal(guardian.pid, 'SIGKILL');
      }
    }
    guardian.stdin?.destroy();
    run.guardianGone = gone;
    return gone;
  }

  private async killRun(run: Run): Promise<void> {
    const pid = run.child.pid;
    if (!run.ended && pid !== undefined) {
      signal(pid, 'SIGKILL');
      await within(run.exited, DEFAULTS.killWaitMs);
    }
    await this.stopGuardian(run);
  }

  private async waitReady(run: Run): Promise<void> {
    const { name, readyTimeoutMs } = this.o;
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (run.ended)
        throw new Error(
          `embedded ${name} ${run.exit === undefined ? 'exited' : `exited (${run.exit})`} before it was ready; its last output: ${this.tailText()}`,
        );
      if (this.phase === 'stopping' || this.phase === 'stopped')
        throw new Error(`embedded ${name} was stopped before it was ready`);
      let ok = false;
      try {
        ok = await this.o.ready();
      } catch {
        ok = false;
      }
      if (ok && !run.ended) return;
      if (Date.now() >= deadline && !run.ended) {
        throw new Error(
          `embedded ${name} did not become ready within ${readyTimeoutMs / 1000} s; its last output: ${this.tailText()}`,
        );
      }
      await sleep(DEFAULTS.readyPollMs);
    }
  }

  private onRunEnded(run: Run): void {
    // start() and stop() deal with the ends they cause; only a running child is restarted.
    if (run !== this.run || this.phase !== 'running') return;
    const { name, log } = this.o;
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < DEFAULTS.crashWindowMs);
    this.crashes.push(now);
    if (this.crashes.length > DEFAULTS.maxCrashes) {
      this.fail(
        new Error(
          `embedded ${name} exited ${this.crashes.length} times within ${DEFAULTS.crashWindowMs / 1000} s (last: ${run.exit}) and is not restarted again; its last output: ${this.tailText()}`,
        ),
      );
      return;
    }
    const delay = (this.o.backoffMs ?? DEFAULTS.restartBackoffMs) * 2 ** (this.crashes.length - 1);
    log.warn(`embedded ${name} exited unexpectedly; restarting it`, {
      child: name,
      exit: run.exit,
      restartInMs: delay,
      lastOutput: this.tail.slice(-DEFAULTS.quotedLines),
    });
    this.restartTimer = setTimeout(() => this.restart(), delay);
  }

  private restart(): void {
    this.restartTimer = undefined;
    if (this.phase !== 'running') return;
    const run = this.spawnRun();
    this.waitReady(run).then(
      () =>
        this.o.log.info(`embedded ${this.o.name} is ready again`, { child: this.o.name, pid: run.child.pid }),
      (err: Error) => {
        // An exit is already counted by onRunEnded; a child that never becomes ready is killed so it
        // is counted the same way.
        if (run.ended || this.phase !== 'running' || run.child.pid === undefined) return;
        this.o.log.warn(`embedded ${this.o.name} did not become ready after a restart; killing it`, {
          child: this.o.name,
          error: err.message,
        });
        signal(run.child.pid, 'SIGKILL');
      },
    );
  }

  private fail(err: Error): void {
    this.phase = 'failed';
    this.removePidFile();
    if (this.fatalListeners.length === 0) this.o.log.error(err.message, { child: this.o.name });
    for (const cb of this.fatalListeners) {
      try {
        cb(err);
      } catch (e) {
        this.o.log.error('onFatal listener threw', { child: this.o.name, error: e });
      }
    }
  }

  private recordLine(line: string): void {
    this.tail.push(line);
    if (this.tail.length > DEFAULTS.tailLines) this.tail.shift();
    this.o.log.debug('embedded child output', { child: this.o.name, line });
  }

  /** The last few output lines on one line, for error messages that must stay one line. */
  private tailText(n: number = DEFAULTS.quotedLines): string {
    const max = DEFAULTS.quotedLineChars;
    const lines = this.tail.slice(-n).map((l) => (l.length > max ? `${l.slice(0, max)}…` : l));
    return lines.length === 0 ? '(no output)' : lines.join(' | ');
  }

  private removePidFile(): void {
    // Only our own pid: after a failed start the file may still name a process we chose not to kill.
    const pid = readPidFile(this.o.pidFile);
    if (pid !== undefined && pid === this.run?.child.pid) rmSync(this.o.pidFile, { force: true });
  }
}
