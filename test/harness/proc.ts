/**
 * Child processes for tests (etcd, nats-server, backends, agents, helpers).
 *
 * Every process is spawned `detached: true`, so it leads its own process
 * group, and every signal goes to the whole group (`process.kill(-pid, sig)`):
 * wrappers (`sh`, `npx`, a bin script that does not `exec`) and their children
 * are stopped together.
 *
 * Nothing is left behind:
 *  - a registry SIGKILLs every group still running when the test process exits
 *    (`process.on('exit')`, also after an uncaught error or SIGINT/SIGTERM);
 *  - when test/run.ts runs the suite it sets MONITOR_TEST_PGID_FILE, and each
 *    group id is appended there, so the runner can kill the groups even when
 *    the suite itself was SIGKILLed (timeout) and its exit hook never ran.
 *
 * Output (stdout and stderr) is kept in memory as lines. With
 * MONITOR_TEST_VERBOSE=1 the last 40 lines of every process are printed to
 * stderr when it exits; a process that exits on its own with a non-zero code
 * or a signal always gets its tail printed (it is most likely the reason a
 * test fails).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export interface ProcExit {
  code: number | null;
  signal: string | null;
}

interface ProcStartOptions {
  /** Extra environment, merged over process.env (a value of undefined removes the variable). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Lines kept in memory; the oldest are dropped beyond this (default 200000). */
  maxLines?: number;
}

interface WaitForLineOptions {
  /** Only consider lines with an absolute index >= this (see `lineCount`); default 0 = all lines so far. */
  fromLine?: number;
}

type ProcStream = 'stdout' | 'stderr';

const VERBOSE = process.env.MONITOR_TEST_VERBOSE === '1';
const live = new Set<Proc>();

function killGroup(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false; // ESRCH: the group is gone
  }
}

function killAllSync(): void {
  for (const p of live) {
    killGroup(p.pid, 'SIGCONT'); // a SIGSTOPped group still dies from SIGKILL, but be explicit
    killGroup(p.pid, 'SIGKILL');
    if (VERBOSE) p.dumpTail(40, 'still running at test exit');
  }
  live.clear();
}

process.on('exit', killAllSync);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    killAllSync();
    process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1));
  });
}

function recordPgid(pid: number): void {
  const file = process.env.MONITOR_TEST_PGID_FILE;
  if (!file) return;
  try {
    fs.appendFileSync(file, `${pid}\n`);
  } catch {
    /* the runner's file went away; the exit hook still covers the normal case */
  }
}

interface Line {
  stream: ProcStream;
  text: string;
}

export class Proc {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly pid: number;
  /** Resolves when the process (the group leader) has exited. Never rejects. */
  readonly exited: Promise<ProcExit>;

  private readonly child: ChildProcess;
  private readonly maxLines: number;
  private buf: Line[] = [];
  private dropped = 0;
  private partial: Record<ProcStream, string> = { stdout: '', stderr: '' };
  private exitInfo: ProcExit | undefined;
  private expectedExit = false;
  private listeners = new Set<() => void>();
  private readonly closed: Promise<void>;

  private constructor(name: string, command: string, args: string[], opts: ProcStartOptions) {
    this.name = name;
    this.command = command;
    this.args = args;
    this.maxLines = opts.maxLines ?? 200_000;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...(opts.env ?? {}) })) {
      if (v !== undefined) env[k] = v;
    }
    this.child = spawn(command, args, {
      cwd: opts.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let spawnError: Error | undefined;
    this.child.once('error', (err) => {
      spawnError = err;
    });
    if (this.child.pid === undefined) {
      // spawn failed synchronously enough to have no pid (ENOENT, EACCES): the 'error' event follows
      throw new Error(`failed to start ${name}: cannot spawn ${command}`);
    }
    this.pid = this.child.pid;
    live.add(this);
    recordPgid(this.pid);

    for (const stream of ['stdout', 'stderr'] as const) {
      const s = this.child[stream];
      s?.setEncoding('utf8');
      s?.on('data', (chunk: string) => this.onData(stream, chunk));
    }
    this.closed = new Promise((resolve) => this.child.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        live.delete(this);
        resolve(this.exitInfo);
        this.notify();
        const crashed = !this.expectedExit && (signal !== null || (code !== null && code !== 0));
        if (VERBOSE || crashed) {
          // give the pipes a moment to deliver the last output before printing it
          void within(this.closed, 300).then(() =>
            this.dumpTail(
              40,
              `exited code=${code} signal=${signal}${spawnError ? ` (${spawnError.message})` : ''}`,
            ),
          );
        }
      });
    });
  }

  /** Spawns `command args...` in its own process group. Throws if it cannot be spawned at all. */
  static start(name: string, command: string, args: string[] = [], opts: ProcStartOptions = {}): Proc {
    return new Proc(name, command, args, opts);
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** Exit code and signal once exited, else undefined. */
  get exit(): ProcExit | undefined {
    return this.exitInfo;
  }

  /** Total number of lines seen so far (absolute index of the next line; use with waitForLine's fromLine). */
  get lineCount(): number {
    return this.dropped + this.buf.length;
  }

  /** All stdout+stderr lines so far, in arrival order (optionally one stream only). */
  lines(stream?: ProcStream): string[] {
    const src = stream ? this.buf.filter((l) => l.stream === stream) : this.buf;
    return src.map((l) => l.text);
  }

  /** The lines that parse as JSON objects (structured logs). */
  jsonLines(stream?: ProcStream): Record<string, any>[] {
    const out: Record<string, any>[] = [];
    for (const text of this.lines(stream)) {
      const t = text.trim();
      if (!t.startsWith('{')) continue;
      try {
        const v: unknown = JSON.parse(t);
        if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, any>);
      } catch {
        /* not JSON */
      }
    }
    return out;
  }

  /** The last n lines joined with newlines (for error messages). */
  tail(n = 40): string {
    return this.lines().slice(-n).join('\n');
  }

  /** Prints the last n lines to stderr. */
  dumpTail(n = 40, why = ''): void {
    const lines = this.lines().slice(-n);
    const head = `----- ${this.name} (pid ${this.pid})${why ? ` ${why}` : ''}: last ${lines.length} lines -----`;
    process.stderr.write(
      `${head}\n${lines.map((l) => `  | ${l}`).join('\n')}\n${'-'.repeat(Math.min(head.length, 80))}\n`,
    );
  }

  /**
   * Resolves with the first line (already seen, or arriving later) for which
   * `predicate` returns true. Rejects after timeoutMs, or when the process
   * exits without printing such a line; the error carries the output's tail.
   */
  waitForLine(
    predicate: (line: string) => boolean,
    timeoutMs = 10_000,
    opts: WaitForLineOptions = {},
  ): Promise<string> {
    let next = Math.max(opts.fromLine ?? 0, this.dropped);
    const scan = (): string | undefined => {
      for (; next < this.lineCount; next++) {
        const line = this.buf[next - this.dropped];
        if (line && predicate(line.text)) {
          next++;
          return line.text;
        }
      }
      return undefined;
    };
    const found = scan();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      let settled = false;
      let exiting = false;
      const done = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.listeners.delete(check);
        fn();
      };
      const check = () => {
        const hit = scan();
        if (hit !== undefined) return done(() => resolve(hit));
        if (!this.running && !exiting) {
          // the last output may still be in the pipe: wait for close (bounded) before giving up
          exiting = true;
          void within(this.closed, 1000).then(() => {
            const last = scan();
            if (last !== undefined) return done(() => resolve(last));
            done(() =>
              reject(
                new Error(
                  `${this.name} exited (code=${this.exitInfo?.code} signal=${this.exitInfo?.signal}) before printing the expected line; last lines:\n${this.tail(40)}`,
                ),
              ),
            );
          });
        }
      };
      const timer = setTimeout(
        () =>
          done(() =>
            reject(
              new Error(
                `timed out after ${timeoutMs}ms waiting for a line from ${this.name}; last lines:\n${this.tail(40)}`,
              ),
            ),
          ),
        timeoutMs,
      );
      this.listeners.add(check);
      check();
    });
  }

  /** Sends a signal to the whole process group (SIGSTOP/SIGCONT included). Returns false if the group is gone. */
  signal(sig: NodeJS.Signals): boolean {
    if (sig === 'SIGKILL' || sig === 'SIGTERM' || sig === 'SIGINT') this.expectedExit = true;
    return killGroup(this.pid, sig);
  }

  /** SIGKILLs the whole group and waits for the leader's exit. */
  async kill(): Promise<ProcExit> {
    this.expectedExit = true;
    killGroup(this.pid, 'SIGKILL');
    const info = await this.exited;
    live.delete(this);
    return info;
  }

  /**
   * Sends `sig` to the group; for the signals that end a process (SIGKILL, SIGTERM, SIGINT) waits
   * for the exit, for the others (SIGSTOP, SIGCONT) returns at once.
   */
  async send(sig: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (sig === 'SIGKILL') {
      await this.kill();
      return;
    }
    this.signal(sig);
    if (sig === 'SIGTERM' || sig === 'SIGINT') await this.exited;
  }

  /**
   * SIGTERM to the group, then SIGKILL if the leader has not exited after
   * timeoutMs. Afterwards any stragglers left in the group are SIGKILLed too.
   */
  async stop(timeoutMs = 5000): Promise<ProcExit> {
    this.expectedExit = true;
    if (this.running) {
      killGroup(this.pid, 'SIGCONT'); // a stopped process cannot handle SIGTERM
      killGroup(this.pid, 'SIGTERM');
      if ((await within(this.exited, timeoutMs)) === undefined) killGroup(this.pid, 'SIGKILL');
    }
    const info = await this.exited;
    killGroup(this.pid, 'SIGKILL'); // leftovers of the group, if any
    live.delete(this);
    return info;
  }

  /** Resolves once stdout/stderr are closed (all output read), or after maxWaitMs. */
  async drained(maxWaitMs = 1000): Promise<void> {
    await within(this.closed, maxWaitMs);
  }

  private onData(stream: ProcStream, chunk: string): void {
    const parts = (this.partial[stream] + chunk).split('\n');
    this.partial[stream] = parts.pop() ?? '';
    for (const p of parts) this.push(stream, p.endsWith('\r') ? p.slice(0, -1) : p);
    this.notify();
  }

  private push(stream: ProcStream, text: string): void {
    this.buf.push({ stream, text });
    if (this.buf.length > this.maxLines) {
      const n = Math.ceil(this.maxLines / 10);
      this.buf.splice(0, n);
      this.dropped += n;
    }
  }

  private notify(): void {
    if (!this.running) {
      // flush unterminated last lines once the process is gone
      for (const stream of ['stdout', 'stderr'] as const) {
        if (this.partial[stream]) {
          this.push(stream, this.partial[stream]);
          this.partial[stream] = '';
        }
      }
    }
    for (const l of [...this.listeners]) l();
  }
}

/** Pids of the live (non-zombie) processes whose process group is `pgid` (Linux /proc). */
export function processGroupMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      // fields after "(comm)": state ppid pgrp ...
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] !== 'Z' && Number(rest[2]) === pgid) out.push(Number(e));
    } catch {
      /* the process went away */
    }
  }
  return out;
}

/** The command name of a process, or '?' when it is gone. */
export function commOf(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  } catch {
    return '?';
  }
}

/**
 * Resolves with p's value, or with undefined after ms; the timer is cleared
 * either way, so it never keeps the test process alive.
 */
export function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Absolute path of an executable: the first of `candidates` (absolute paths)
 * that exists and is executable, else `name` searched on PATH and then in
 * `extraDirs`. Throws with the places it looked.
 */
export function findExecutable(
  name: string,
  opts: { candidates?: string[]; extraDirs?: string[] } = {},
): string {
  const tried: string[] = [];
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...(opts.extraDirs ?? [])];
  for (const p of [...(opts.candidates ?? []), ...dirs.map((d) => `${d}/${name}`)]) {
    tried.push(p);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  throw new Error(`executable ${name} not found; looked at: ${tried.join(', ')}`);
}
