import fs from 'node:fs';
import path from 'node:path';

// One agent per cache-dir: two writers appending to the same segments would corrupt each other's
// records. The lock holds the owner's pid so a lock left by a killed agent (dead pid) is taken over.

export const LOCK_FILE = 'monitor-agent.lock';

/** Opening the outbox failed for a reason the operator must fix; the message is one clear line. */
export class OutboxOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboxOpenError';
  }
}

// Same-process guard: a pid check cannot tell two Agents of one process apart.
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// After a reboot the pid of a killed agent is often reused by some other program; a live pid whose
// command line does not mention monitor-agent is that case. Where /proc is unavailable, trust the pid.
function isAgent(pid: number): boolean {
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  return cmdline.includes('monitor-agent');
}

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  // "ENOTDIR: not a directory, mkdir '/x'" -> "ENOTDIR: not a directory": the caller names the path.
  return e.code
    ? `${e.code}: ${e.message.replace(/^\w+: /, '').replace(/, \w+ '.*$/, '')}`
    : String(e.message ?? err);
}

/** Creates `dir` if missing and takes its lock; answers a release function. */
export function lockCacheDir(dir: string): () => void {
  const abs = path.resolve(dir);
  try {
    fs.mkdirSync(abs, { recursive: true });
  } catch (err) {
    throw new OutboxOpenError(`cannot create cache-dir ${abs}: ${reason(err)}`);
  }
  if (heldHere.has(abs)) throw new OutboxOpenError(`another monitor-agent (pid ${process.pid}) uses ${abs}`);
  const file = path.join(abs, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = fs.openSync(file, 'wx', 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new OutboxOpenError(`cache-dir ${abs} is not writable: ${reason(err)}`);
      let text = '';
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        /* vanished meanwhile: try again */
      }
      const pid = /^\s*(\d+)\s*$/.test(text) ? Number(text) : NaN;
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) && isAgent(pid)) {
        throw new OutboxOpenError(`another monitor-agent (pid ${pid}) uses ${abs}`);
      }
      // Stale (dead owner, our own pid from an earlier life, or unreadable): take it over.
      try {
        fs.unlinkSync(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
          throw new OutboxOpenError(`cache-dir ${abs} is not writable: ${reason(e)}`);
      }
      continue;
    }
    try {
      fs.writeSync(fd, `${process.pid}\n`);
    } finally {
      fs.closeSync(fd);
    }
    heldHere.add(abs);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      heldHere.delete(abs);
      try {
        if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
      } catch {
        /* already gone */
      }
    };
  }
  throw new OutboxOpenError(`cannot take the lock ${file}: it keeps changing`);
}
