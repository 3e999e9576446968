/**
 * Test runner: node --import tsx test/run.ts [--dir <dir>] [substring filters...]
 *
 * Finds every test/**\/*.test.ts (except under test/harness and test/fixtures),
 * ordered test/unit, test/integration, test/e2e, test/cluster, then the rest,
 * alphabetical inside each group. Positional arguments keep only the files
 * whose path (relative to the repo root) contains one of them. `--dir <dir>`
 * looks for the *.test.ts files under <dir> instead of test/ (the runner's own
 * tests, test/unit/runner.test.ts, run it on fixture suites in a temp dir);
 * the suites still run with the repo root as their working directory.
 *
 * First dist/ (the compiled programs the suites run, deploy/build/build.ts) is rebuilt when it is
 * not the build of the current sources.
 *
 * Each file runs as its own process `node --import tsx <file>`, in its own
 * process group, with a timeout (300 s, or the value of a
 * `// suite-timeout: <seconds>` comment in the file's first 20 lines).
 *
 * Suites run two at a time (MONITOR_TEST_JOBS, or `--jobs N`; 1 runs them one
 * after the other): most of them wait on timers and leave the CPU idle. A
 * suite whose first 20 lines hold `// suite-exclusive: <reason>` (chaos, the
 * cluster failover and timing suites) runs alone: the runner lets the running
 * suites finish first and starts the next one only when it has ended; these
 * suites come after all the others (when more than one runs at a time). Each
 * suite gets its own slice of the test port range (MONITOR_TEST_PORT_RANGE,
 * read by test/harness/ports.ts), so two suites never probe the same port.
 *
 * On timeout the whole group is SIGKILLed. After every suite, leftover processes
 * are SIGKILLed too: the suite's own group, and every group the harness
 * recorded in MONITOR_TEST_PGID_FILE (the harness spawns etcd, nats-server,
 * backends and agents in groups of their own, which a SIGKILLed suite cannot
 * clean up itself); then the temp dirs the harness recorded in
 * MONITOR_TEST_TMP_FILE are removed (unless MONITOR_TEST_KEEP_TMP=1).
 *
 * Counting. uvu 0.5.6 ends each run with
 *     Total:     N
 *     Passed:    N
 *     Skipped:   N
 * Verified here with a small experiment (4 tests: 2 pass, 1 fail, 1 test.skip
 * -> "Total: 3, Passed: 2, Skipped: 1", exit 1): `Total` counts the tests that
 * were executed, failures included, and does NOT include skipped tests
 * (test.skip, or the tests left out by test.only, which are counted in
 * Skipped). So failed = Total - Passed; Skipped is reported separately.
 * Also verified:
 *  - an error thrown in a `before` hook is swallowed by uvu: nothing printed,
 *    "Total: 2, Passed: 0", exit 0. Counting Total - Passed (rather than
 *    trusting the exit code) turns that into 2 failures; and suites take
 *    `test` from test/harness/uvu.ts, which prints the hook's error and makes
 *    every test of the suite fail with it;
 *  - an error thrown in an `after` hook crashes the process with no summary
 *    (exit 1);
 *  - `.run()` called after an await prints a second summary: summaries are
 *    summed.
 *
 * A run is strict: a test that did not run is a failure. So a suite is
 * charged, besides its failed tests:
 *  - one failure per skipped test (Skipped: N > 0), which also catches a
 *    `.only` (uvu counts the other tests of the suite as skipped);
 *  - 1 failure when its source calls `.only(` while nothing was reported
 *    skipped (every test of it is `.only`);
 *  - 1 failure when it ran no test at all (Total 0 and nothing skipped);
 *  - 1 failure when its source registers a `before` or `before.each` hook
 *    but does not import `test` from test/harness/uvu.ts (an error in such a
 *    hook would pass unseen);
 *  - 1 failure when it exits non-zero while its summaries show no failure
 *    (or it printed none), when it exits 0 without any summary, or when it
 *    times out (whatever it had reported is kept).
 *
 * Output: the suite's stdout and stderr are passed through to our stdout,
 * then one line `suite <file>: N passed, N failed (Xs)`. When suites run
 * side by side, each one's output is held back and printed whole, under its
 * `=== <file>` header, when it ends (a suite that runs alone streams it).
 * The last line of the run is exactly `N passed, N failed`; exit 1 if anything failed or nothing
 * ran.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../deploy/build/build.ts';
import { testPortRange } from './harness/ports.ts';
import { commOf, processGroupMembers } from './harness/proc.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TEST_DIR = path.join(ROOT, 'test');
const DEFAULT_TIMEOUT_S = 300;
const GROUPS = ['test/unit/', 'test/integration/', 'test/e2e/', 'test/cluster/'];
const SKIP_DIRS = new Set(['test/harness', 'test/fixtures', 'test/node_modules']);

function findTests(dir: string, out: string[] = []): string[] {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, ent.name);
    const rel = path.relative(ROOT, abs).split(path.sep).join('/');
    if (ent.isDirectory()) {
      if (!SKIP_DIRS.has(rel) && !ent.name.startsWith('.')) findTests(abs, out);
    } else if (ent.isFile() && ent.name.endsWith('.test.ts')) {
      out.push(rel);
    }
  }
  return out;
}

function groupOf(rel: string): number {
  const i = GROUPS.findIndex((g) => rel.startsWith(g));
  return i < 0 ? GROUPS.length : i;
}

function headComment(rel: string, key: string): string | undefined {
  const head = fs.readFileSync(path.join(ROOT, rel), 'utf8').split('\n').slice(0, 20);
  const re = new RegExp(`^\\s*//\\s*${key}:\\s*(.*?)\\s*$`);
  for (const line of head) {
    const m = re.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

function suiteTimeoutSeconds(rel: string): number {
  const v = headComment(rel, 'suite-timeout');
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : DEFAULT_TIMEOUT_S;
}

/** `// suite-exclusive: <reason>`: the suite runs with no other suite beside it. */
function suiteExclusive(rel: string): boolean {
  return headComment(rel, 'suite-exclusive') !== undefined;
}

/** What the suite's source shows that its uvu summary may not: a `.only`, an unguarded before hook. */
function sourceProblems(rel: string): { only: boolean; unguardedBefore: boolean } {
  const src = fs.readFileSync(path.join(ROOT, rel), 'utf8');
  const before = /\.before(\.each)?\s*\(/.test(src);
  const guarded = /from\s+['"][^'"]*harness\/uvu\.ts['"]/.test(src);
  return { only: /\.only\s*\(/.test(src), unguardedBefore: before && !guarded };
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

interface Summary {
  total: number;
  passed: number;
  skipped: number;
  count: number;
}

/** Reads uvu summaries from stdout lines: "Total:" then "Passed:" then "Skipped:" on consecutive lines. */
class SummaryParser {
  readonly sum: Summary = { total: 0, passed: 0, skipped: 0, count: 0 };
  private partial = '';
  private pending: { total: number; passed?: number } | undefined;

  feed(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    for (const p of parts) this.line(p);
  }

  end(): void {
    if (this.partial) this.line(this.partial);
    this.partial = '';
  }

  private line(raw: string): void {
    const line = raw.replace(ANSI, '').replace(/\r$/, '');
    const m = /^\s*(Total|Passed|Skipped):\s+(\d+)\s*$/.exec(line);
    if (!m) {
      this.pending = undefined;
      return;
    }
    const n = Number(m[2]);
    if (m[1] === 'Total') this.pending = { total: n };
    else if (m[1] === 'Passed' && this.pending && this.pending.passed === undefined) this.pending.passed = n;
    else if (m[1] === 'Skipped' && this.pending?.passed !== undefined) {
      this.sum.total += this.pending.total;
      this.sum.passed += this.pending.passed;
      this.sum.skipped += n;
      this.sum.count++;
      this.pending = undefined;
    } else this.pending = undefined;
  }
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGCONT');
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* ESRCH: already gone */
  }
}

/** "pid:comm" of the live (non-zombie) processes in group pgid. */
function groupMembers(pgid: number): string[] {
  return processGroupMembers(pgid).map((pid) => `${pid}:${commOf(pid)}`);
}

/** SIGKILLs the recorded groups that still exist; returns a description of each. */
function killRecordedGroups(file: string): string[] {
  const killed: string[] = [];
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return killed;
  }
  for (const pgid of new Set(
    text
      .split('\n')
      .map(Number)
      .filter((x) => Number.isInteger(x) && x > 1),
  )) {
    try {
      process.kill(-pgid, 0);
    } catch {
      continue; // group gone
    }
    const members = groupMembers(pgid);
    if (members.length === 0 && fs.existsSync('/proc/self')) continue; // only zombies waiting to be reaped
    killed.push(`${pgid} [${members.join(' ')}]`);
    killGroup(pgid);
  }
  fs.writeFileSync(file, '');
  return killed;
}

/** Removes the temp dirs the harness recorded (normally already gone via its exit hook). */
function removeRecordedDirs(file: string): void {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return;
  }
  if (process.env.MONITOR_TEST_KEEP_TMP !== '1') {
    for (const dir of new Set(text.split('\n').filter((d) => path.isAbsolute(d)))) {
      try {
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
      } catch {
        /* best effort */
      }
    }
  }
  fs.writeFileSync(file, '');
}

interface RecordFiles {
  pgids: string;
  dirs: string;
  /** `lo-hi`: the ports this suite's harness may hand out (test/harness/ports.ts). */
  ports: string;
}

/** The suites running now, by process group: what a signal to the runner must clean up. */
const running = new Map<number, RecordFiles>();

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    for (const [pgid, files] of running) {
      killGroup(pgid);
      killRecordedGroups(files.pgids);
      removeRecordedDirs(files.dirs);
      fs.rmSync(files.pgids, { force: true });
      fs.rmSync(files.dirs, { force: true });
    }
    process.stdout.write(`\ninterrupted by ${sig}\n`);
    process.exit(130);
  });
}

interface SuiteResult {
  passed: number;
  failed: number;
  skipped: number;
}

/** Where a suite's output goes: straight to our stdout, or into a buffer printed when it ends. */
type Sink = (text: string) => void;

function runSuite(rel: string, files: RecordFiles, out: Sink): Promise<SuiteResult> {
  const timeoutS = suiteTimeoutSeconds(rel);
  const source = sourceProblems(rel);
  fs.writeFileSync(files.pgids, '');
  fs.writeFileSync(files.dirs, '');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', rel], {
      cwd: ROOT,
      env: {
        ...process.env,
        NO_COLOR: '1',
        FORCE_COLOR: '0',
        MONITOR_TEST_PGID_FILE: files.pgids,
        MONITOR_TEST_TMP_FILE: files.dirs,
        MONITOR_TEST_PORT_RANGE: files.ports,
        // Every backend of the tests freezes what its actors read, so a turn that changes a stored
        // event in place fails its test (docs/architecture.md#owned-state-stays-decoded).
        MONITOR_BACKEND_DEBUG_FREEZE_READS: 'true',
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const parser = new SummaryParser();
    let timedOut = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out(c);
      parser.feed(c);
    });
    child.stderr.on('data', (c: string) => out(c));
    if (child.pid !== undefined) running.set(child.pid, files);
    const timer = setTimeout(() => {
      timedOut = true;
      out(`\nsuite ${rel}: TIMEOUT after ${timeoutS}s, killing its process group\n`);
      if (child.pid !== undefined) killGroup(child.pid);
    }, timeoutS * 1000);

    let spawnError: Error | undefined;
    child.once('error', (err) => {
      spawnError = err;
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (child.pid !== undefined) killGroup(child.pid); // stragglers in the suite's group
      const leftovers = killRecordedGroups(files.pgids);
      removeRecordedDirs(files.dirs);
      if (child.pid !== undefined) running.delete(child.pid);
      // let the pipes deliver what is left (bounded: a stray holder of the pipe must not hang us)
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        parser.end();
        const s = parser.sum;
        let failed = s.total - s.passed;
        const notes: string[] = [];
        if (spawnError) notes.push(`could not start: ${spawnError.message}`);
        if (s.skipped > 0) {
          failed += s.skipped;
          notes.push(`${s.skipped} test(s) skipped (test.skip, or left out by a .only), each a failure`);
        }
        if (source.only && s.skipped === 0) {
          failed += 1;
          notes.push('its source calls .only(');
        }
        if (s.count > 0 && s.total === 0 && s.skipped === 0) {
          failed += 1;
          notes.push('no test ran (Total: 0)');
        }
        if (source.unguardedBefore) {
          failed += 1;
          notes.push(
            'it registers a before hook with test from uvu: import test from test/harness/uvu.ts so an error in the hook is reported',
          );
        }
        if (timedOut) {
          failed += 1;
          notes.push(`timed out after ${timeoutS}s`);
        } else if (s.count === 0) {
          failed += 1;
          notes.push(`no uvu summary (exit code ${code}, signal ${signal})`);
        } else if (code !== 0 && failed === 0) {
          failed += 1;
          notes.push(`exit code ${code}, signal ${signal} despite a clean summary`);
        }
        if (leftovers.length > 0) notes.push(`killed leftover process group(s): ${leftovers.join(', ')}`);
        if (notes.length) out(`\nsuite ${rel}: ${notes.join('; ')}\n`);
        resolve({ passed: s.passed, failed, skipped: s.skipped });
      };
      child.once('close', finish);
      setTimeout(finish, 2000).unref();
    });
  });
}

/** The test port range split in `n` slices, `lo-hi` each (test/harness/ports.ts's range). */
function portSlices(n: number): string[] {
  const [lo, hi] = testPortRange();
  const size = Math.floor((hi - lo + 1) / n);
  return Array.from({ length: n }, (_, i) => `${lo + i * size}-${lo + (i + 1) * size - 1}`);
}

function jobsFrom(args: string[]): number {
  const at = args.indexOf('--jobs');
  let text = process.env.MONITOR_TEST_JOBS ?? '2';
  if (at >= 0) {
    text = args[at + 1] ?? '';
    args.splice(at, 2);
  }
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--jobs / MONITOR_TEST_JOBS: not a positive integer: ${text}`);
  return n;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let dir = TEST_DIR;
  const at = args.indexOf('--dir');
  if (at >= 0) {
    if (!args[at + 1]) throw new Error('--dir needs a directory');
    dir = path.resolve(args[at + 1]!);
    args.splice(at, 2);
  }
  const jobs = jobsFrom(args);
  const filters = args;
  // The suites run the compiled programs (bin/ launchers import dist/): bring dist/ up to date once,
  // here, rather than in the first suites that import the harness, side by side.
  const rebuilt = await buildIfStale();
  if (rebuilt !== undefined) process.stdout.write(`build: dist/ was stale (${rebuilt}): rebuilt\n`);
  const files = findTests(dir)
    .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
    .sort((a, b) => groupOf(a) - groupOf(b) || (a < b ? -1 : a > b ? 1 : 0));
  // Exclusive suites after the others (in the same order): the pair running before each one must
  // end first, which costs one wait for the whole block instead of one per exclusive suite.
  if (jobs > 1) files.sort((a, b) => Number(suiteExclusive(a)) - Number(suiteExclusive(b)));

  // One slot per suite that may run at once: its record files and its slice of the ports.
  const slices = portSlices(jobs);
  const free = slices.map((ports, i) => ({
    pgids: path.join(os.tmpdir(), `monitor-test-pgids-${process.pid}-${i}`),
    dirs: path.join(os.tmpdir(), `monitor-test-dirs-${process.pid}-${i}`),
    ports,
  }));
  const allSlots = [...free];
  const started = Date.now();
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const took: { rel: string; secs: number }[] = [];

  const runOne = async (rel: string, alone: boolean): Promise<void> => {
    const slot = free.shift()!;
    // A suite that runs alone streams its output; side by side, each one is printed whole when it ends.
    let held = '';
    const out: Sink = alone ? (t) => process.stdout.write(t) : (t) => void (held += t);
    if (alone) process.stdout.write(`\n=== ${rel}\n`);
    const t0 = Date.now();
    try {
      const r = await runSuite(rel, slot, out);
      passed += r.passed;
      failed += r.failed;
      skipped += r.skipped;
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      took.push({ rel, secs: Number(secs) });
      const line = `suite ${rel}: ${r.passed} passed, ${r.failed} failed (${secs}s)\n`;
      process.stdout.write(alone ? line : `\n=== ${rel}\n${held}${line}`);
    } finally {
      free.push(slot);
    }
  };

  try {
    if (files.length === 0)
      process.stdout.write(`no test files matched${filters.length ? ` ${JSON.stringify(filters)}` : ''}\n`);
    const inFlight = new Set<Promise<void>>();
    for (const rel of files) {
      const exclusive = jobs === 1 || files.length === 1 || suiteExclusive(rel);
      if (exclusive) await Promise.all(inFlight);
      else while (inFlight.size >= jobs) await Promise.race(inFlight);
      const p: Promise<void> = runOne(rel, exclusive).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (exclusive) await p;
    }
    await Promise.all(inFlight);
  } finally {
    for (const slot of allSlots) {
      fs.rmSync(slot.pgids, { force: true });
      fs.rmSync(slot.dirs, { force: true });
    }
  }
  // The slowest suites, so a run over its time budget says where the time went.
  const slowest = took.sort((a, b) => b.secs - a.secs).slice(0, 15);
  if (slowest.length > 1)
    process.stdout.write(
      `\nslowest suites:\n${slowest.map((t) => `  ${t.secs.toFixed(1).padStart(6)}s ${t.rel}`).join('\n')}\n`,
    );
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`\n${files.length} suite(s), ${skipped} skipped, ${jobs} at a time, ${secs}s\n`);
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  return failed > 0 || passed + failed === 0 ? 1 : 0;
}

process.exitCode = await main();
