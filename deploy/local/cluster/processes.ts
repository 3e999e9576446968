/**
 * Starting a process of the cluster in the background and stopping it again by its pid file.
 *
 * A process is spawned detached (the leader of a process group of its own, so a Ctrl-C at the
 * terminal that ran `make cluster` does not reach it), with stdin closed and stdout and stderr
 * appended to its log file, and unref'd: it outlives `make`. Its pid goes to its pid file. A pid
 * read back counts as ours only when that process is alive and its command line holds every marker
 * of its spec (paths inside the cluster folder), so a pid reused by some other program is never
 * signalled.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cmdlineOf, isAlive, readPidFile, signal, waitGone } from '../../../lib/embedded/proc.ts';
import type { ProcessSpec } from './topology.ts';

const KILL_WAIT_MS = 5000;

/** The pid of the spec's process when it runs (alive, and its command line is the one we started). */
export function runningPid(spec: ProcessSpec): number | undefined {
  const pid = readPidFile(spec.pidFile);
  if (pid === undefined || !isAlive(pid)) return undefined;
  const cmdline = cmdlineOf(pid);
  return cmdline !== undefined && spec.markers.every((m) => cmdline.includes(m)) ? pid : undefined;
}

/** Spawns the process in the background and writes its pid file; returns its pid. */
export function startProcess(spec: ProcessSpec, root: string): number {
  spec.prepare();
  mkdirSync(dirname(spec.logFile), { recursive: true });
  mkdirSync(dirname(spec.pidFile), { recursive: true });
  const header = `\n=== ${new Date().toISOString()} ${spec.command} ${spec.args.join(' ')}\n`;
  appendFileSync(spec.logFile, header);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !spec.dropEnv?.(k)) env[k] = v;
  const fd = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.on('error', () => {}); // ENOENT and the like: no pid, reported below
    if (child.pid === undefined) throw new Error(`cannot run ${spec.command} for ${spec.name}`);
    child.unref();
    writeFileSync(spec.pidFile, `${child.pid}\n`);
    recordGroupForTests(child.pid);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/**
 * Under the test runner (test/run.ts sets MONITOR_TEST_PGID_FILE), each process group is recorded
 * as the test harness records its own, so a suite killed mid-way leaves no cluster behind.
 */
function recordGroupForTests(pid: number): void {
  const file = process.env.MONITOR_TEST_PGID_FILE;
  if (!file) return;
  try {
    appendFileSync(file, `${pid}\n`);
  } catch {
    /* the runner's file is gone: `down` still stops everything */
  }
}

type StopOutcome = 'not running' | 'not ours' | 'stopped' | 'killed' | 'still running';

function killGroup(pid: number): void {
  // The process group of a leader we verified: what it started (a check, a hook) goes with it.
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* no such group any more */
  }
}

/**
 * SIGTERM, then SIGKILL (to its whole group) when it has not exited within the spec's bound; the pid
 * file is removed once the process is gone. A pid file naming some other process is only removed.
 */
export async function stopProcess(spec: ProcessSpec): Promise<{ outcome: StopOutcome; pid?: number }> {
  const pid = runningPid(spec);
  if (pid === undefined) {
    const recorded = readPidFile(spec.pidFile);
    rmSync(spec.pidFile, { force: true });
    return recorded !== undefined && isAlive(recorded)
      ? { outcome: 'not ours', pid: recorded }
      : { outcome: 'not running' };
  }
  signal(pid, 'SIGTERM');
  let outcome: StopOutcome = 'stopped';
  if (!(await waitGone(pid, spec.stopTimeoutMs))) {
    outcome = 'killed';
    signal(pid, 'SIGKILL');
    killGroup(pid);
    if (!(await waitGone(pid, KILL_WAIT_MS))) return { outcome: 'still running', pid };
  }
  // Whatever it left running in its group.
  killGroup(pid);
  rmSync(spec.pidFile, { force: true });
  return { outcome, pid };
}
