// Small /proc helpers shared by the supervisor (stale children) and the state-dir claim (stale
// backends). A pid file alone proves nothing, since pids are reused; the command line must match too.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const DEFAULTS = {
  /** How often waitGone looks whether the process is gone yet. */
  goneCheckMs: 25,
} as const;

/** True when `pid` exists and is not a zombie (an unreaped zombie holds no ports or files any more). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the ")" that closes the command name, which may itself contain spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The process's argv joined with spaces, or undefined when it is gone or unreadable. */
export function cmdlineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** Reads a pid file; undefined when it is missing or does not hold a plausible pid. */
export function readPidFile(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 1 ? pid : undefined;
}

/** Resolves true once `pid` is gone, false when it still lives after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(DEFAULTS.goneCheckMs);
  }
  return true;
}

/** Sends a signal, ignoring "no such process": the target may have exited a moment ago. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
