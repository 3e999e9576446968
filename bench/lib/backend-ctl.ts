/**
 * Instrumentation of a backend under test without touching its code: bench/lib/loop-lag-preload.mjs
 * is preloaded through NODE_OPTIONS and reports event-loop delay and memory every 5 s on stderr; on
 * SIGUSR2 it runs the command written to a control file (forced GC, CPU profile start/stop).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir, type Proc } from '../../test/harness/index.ts';
import { summarizeProfile } from './cpuprofile.ts';
import { fix, int, table } from './format.ts';
import { REPO_ROOT } from './infra.ts';

const PRELOAD = pathToFileURL(path.join(REPO_ROOT, 'bench/lib/loop-lag-preload.mjs')).href;

export interface LoopReport {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  rss_mb: number;
  heap_used_mb: number;
  heap_total_mb: number;
  external_mb: number;
  array_buffers_mb: number;
  /** GC pauses in the 5 s before the report. */
  gc_count: number;
  gc_total_ms: number;
  gc_max_ms: number;
  at: number;
  after_gc?: boolean;
}

export interface Instrumentation {
  ctlFile: string;
  env: Record<string, string>;
}

/** The node flag that loads the preload (for processes started with `node` directly). */
export const PRELOAD_IMPORT = ['--import', PRELOAD];

/**
 * Environment for startBackend({ env }) that loads the preload, with a fresh control file.
 * `profileFromStart`: the CPU profiler runs from the preload's load on; `stopProfile` writes it, or
 * the process itself at its exit to `env.BENCH_PROF_EXIT_FILE` (a start that failed).
 */
export function instrumentation(o: { profileFromStart?: boolean } = {}): Instrumentation {
  const ctlFile = path.join(tempDir('bench-ctl'), 'command');
  // BENCH_BACKEND_NODE_OPTIONS adds node/V8 flags for experiments (e.g. --max-old-space-size=256).
  const extra = process.env.BENCH_BACKEND_NODE_OPTIONS ?? '';
  return {
    ctlFile,
    env: {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${extra} --import ${PRELOAD}`
        .replace(/\s+/g, ' ')
        .trim(),
      BENCH_CTL_FILE: ctlFile,
      ...(o.profileFromStart
        ? {
            BENCH_PROF_AT_START: '1',
            BENCH_PROF_EXIT_FILE: path.join(path.dirname(ctlFile), 'at-exit.cpuprofile'),
          }
        : {}),
    },
  };
}

/** The preload's memory/loop reports printed since line `fromLine`. */
export function loopReports(b: { proc: Proc }, fromLine = 0): LoopReport[] {
  const out: LoopReport[] = [];
  const lines = b.proc.lines();
  for (let i = Math.max(0, fromLine - (b.proc.lineCount - lines.length)); i < lines.length; i++) {
    const l = lines[i]!;
    if (!l.startsWith('{"bench_loop"')) continue;
    try {
      out.push((JSON.parse(l) as { bench_loop: LoopReport }).bench_loop);
    } catch {
      /* partial */
    }
  }
  return out;
}

/** Runs a preload command in the backend; resolves with its answer line (undefined on timeout). */
async function control(
  b: { proc: Proc },
  ctl: Instrumentation,
  cmd: string,
  answer: (line: string) => boolean,
  timeoutMs = 10_000,
): Promise<string | undefined> {
  const from = b.proc.lineCount;
  fs.writeFileSync(ctl.ctlFile, cmd);
  b.proc.signal('SIGUSR2');
  try {
    return await b.proc.waitForLine(answer, timeoutMs, { fromLine: from });
  } catch {
    return undefined;
  }
}

/** Forces a full GC in the backend and returns its memory afterwards. */
export async function memoryAfterGc(
  b: { proc: Proc },
  ctl: Instrumentation,
): Promise<LoopReport | undefined> {
  const line = await control(b, ctl, 'gc', (l) => l.includes('"after_gc":true'));
  if (!line) return undefined;
  try {
    return (JSON.parse(line) as { bench_loop: LoopReport }).bench_loop;
  } catch {
    return undefined;
  }
}

/** Starts the backend's CPU profiler; stop() writes the .cpuprofile (kept under the OS temp dir) and returns its path. */
export async function startProfile(
  b: { proc: Proc },
  ctl: Instrumentation,
  label: string,
): Promise<{ stop(): Promise<string | undefined> }> {
  await control(b, ctl, 'prof-start', (l) => l.includes('"bench_prof"'));
  return { stop: () => stopProfile(b, ctl, label) };
}

/** Stops the backend's CPU profiler (started by startProfile or from its start) and returns the file written. */
export async function stopProfile(
  b: { proc: Proc },
  ctl: Instrumentation,
  label: string,
): Promise<string | undefined> {
  const file = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-bench-prof-')),
    `${label}.cpuprofile`,
  );
  return (await control(b, ctl, `prof-stop ${file}`, (l) => l.includes('"bench_prof"'), 30_000)) &&
    fs.existsSync(file)
    ? file
    : undefined;
}

/** Writes a heap snapshot of the process (kept under the OS temp dir); resolves with its path. */
export async function heapSnapshot(
  b: { proc: Proc },
  ctl: Instrumentation,
  label: string,
): Promise<string | undefined> {
  const file = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-bench-heap-')),
    `${label}.heapsnapshot`,
  );
  return (await control(b, ctl, `heap ${file}`, (l) => l.includes('"bench_heap"'), 120_000)) &&
    fs.existsSync(file)
    ? file
    : undefined;
}

/** Top self-time functions and modules of a profile, as table lines. */
export function profileLines(file: string, top = 30): string[] {
  const p = summarizeProfile(file, REPO_ROOT, top);
  return [
    `${int(p.totalMs)} ms sampled; ${file}`,
    table(
      ['self ms', '%', 'function', 'where'],
      p.functions.map((f) => [int(f.selfMs), fix(f.pct, 1), f.name, f.where]),
    ),
    '',
    table(
      ['self ms', '%', 'module'],
      p.modules.map((m) => [int(m.selfMs), fix(m.pct, 1), m.module]),
    ),
  ];
}
