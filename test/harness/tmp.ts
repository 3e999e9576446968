/**
 * Temporary directories for test processes (etcd data, NATS store, backend
 * state, agent cache). Placed under /dev/shm when it is a writable tmpfs with
 * room to spare (etcd is about 2x faster there, and each etcd preallocates a
 * 64 MiB WAL), else under os.tmpdir(). All of them are removed when the test
 * process exits, unless MONITOR_TEST_KEEP_TMP=1 (then their paths are printed).
 * Under test/run.ts each path is also appended to MONITOR_TEST_TMP_FILE, so
 * the runner removes them even when it had to SIGKILL the suite.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const created: string[] = [];
let baseDir: string | undefined;
let hooked = false;

const MIN_FREE_BYTES = 1024 * 1024 * 1024;

function pickBase(): string {
  if (baseDir) return baseDir;
  baseDir = os.tmpdir();
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    const st = fs.statfsSync('/dev/shm');
    if (st.bavail * st.bsize >= MIN_FREE_BYTES) baseDir = '/dev/shm';
  } catch {
    /* no usable /dev/shm */
  }
  return baseDir;
}

function cleanup(): void {
  const keep = process.env.MONITOR_TEST_KEEP_TMP === '1';
  for (const dir of created.splice(0)) {
    if (keep) {
      process.stderr.write(`[harness] kept temp dir ${dir}\n`);
      continue;
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
    } catch {
      /* best effort */
    }
  }
}

/** Creates a fresh, empty directory; `prefix` becomes part of its name. */
export function tempDir(prefix = 'monitor-test'): string {
  if (!hooked) {
    hooked = true;
    process.on('exit', cleanup);
  }
  const safe = prefix.replace(/[^A-Za-z0-9_.-]/g, '_');
  let dir: string;
  try {
    dir = fs.mkdtempSync(path.join(pickBase(), `${safe}-`));
  } catch {
    baseDir = os.tmpdir();
    dir = fs.mkdtempSync(path.join(baseDir, `${safe}-`));
  }
  created.push(dir);
  const record = process.env.MONITOR_TEST_TMP_FILE;
  if (record) {
    try {
      fs.appendFileSync(record, `${dir}\n`);
    } catch {
      /* the exit hook still covers the normal case */
    }
  }
  return dir;
}

/** Removes a directory made by tempDir() now instead of at exit. */
export function removeTempDir(dir: string): void {
  const i = created.indexOf(dir);
  if (i >= 0) created.splice(i, 1);
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
}
