// One backend per state dir: two backends would fight over the embedded children's pid files, ports
// and data dirs, and each would "clean up" the other's children as stale.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { cmdlineOf, isAlive, readPidFile } from './proc.ts';

const BACKEND_MARKERS = ['monitor-backend', 'bin/backend'];

/** Claims `stateDir` for this process; the returned function releases it (idempotent). */
export async function claimStateDir(stateDir: string, log: Logger): Promise<() => void> {
  mkdirSync(stateDir, { recursive: true });
  const pidFile = join(stateDir, 'backend.pid');
  const other = readPidFile(pidFile);
  if (other !== undefined && other !== process.pid && isAlive(other)) {
    const cmdline = cmdlineOf(other) ?? '';
    if (BACKEND_MARKERS.some((m) => cmdline.includes(m))) {
      throw new Error(`another monitor-backend (pid ${other}) is using state dir ${stateDir}`);
    }
    // A reused pid: the backend that wrote the file is gone.
    log.debug('backend pid file names an unrelated process; taking the state dir over', {
      pid: other,
      pidFile,
    });
  }
  writeFileSync(pidFile, `${process.pid}\n`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // Leave a file another backend has written since (it would only happen after a forced takeover).
    if (readPidFile(pidFile) === process.pid) rmSync(pidFile, { force: true });
  };
}
