/**
 * CPU and memory of processes from Linux /proc: CPU time from /proc/<pid>/stat (utime + stime of
 * every thread, in clock ticks), RSS from /proc/<pid>/status (VmRSS), machine-wide busy/steal
 * from /proc/stat.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

let clkTck = 100;
try {
  clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* Linux default */
}

/** utime + stime of `pid` in seconds, or undefined when the process is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime(14) stime(15)
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / clkTck;
  } catch {
    return undefined;
  }
}

/** Resident set size of `pid` in MB (VmRSS), or undefined when the process is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Open file descriptors of `pid`. */
export function openFds(pid: number): number | undefined {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/** Soft "Max open files" limit of `pid` (from /proc/<pid>/limits). */
export function maxOpenFiles(pid: number | 'self' = 'self'): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return m ? (m[1] === 'unlimited' ? Infinity : Number(m[1])) : undefined;
  } catch {
    return undefined;
  }
}

interface SystemTicks {
  busy: number;
  steal: number;
  total: number;
}

function systemTicks(): SystemTicks | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice (guest is counted in user)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
    return {
      busy: user + nice + system + irq + softirq,
      steal,
      total: user + nice + system + idle + iowait + irq + softirq + steal,
    };
  } catch {
    return undefined;
  }
}

interface ProcFigures {
  /** Average CPU over the window, % of one core (can exceed 100 for multi-threaded processes). */
  cpuPct: number;
  rssAvgMb: number;
  rssMaxMb: number;
  rssEndMb: number;
}

export interface WindowFigures {
  seconds: number;
  procs: Record<string, ProcFigures>;
  /** Whole machine: busy % of all cores, and steal % (time the hypervisor gave to someone else). */
  machineBusyPct: number;
  stealPct: number;
  /** CPU used by everything else on the machine (other people's work), % of one core. */
  othersPct: number;
}

/**
 * Measures a set of named processes over a window: CPU from the difference of their CPU time
 * between start() and stop(), RSS sampled every `sampleMs`.
 */
export class ProcMeter {
  private startCpu = new Map<string, number>();
  private rss = new Map<string, number[]>();
  private startedAt = 0;
  private startSys: SystemTicks | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pids: Record<string, number>,
    private readonly sampleMs = 1000,
  ) {}

  start(): this {
    this.startedAt = performance.now();
    this.startSys = systemTicks();
    for (const [name, pid] of Object.entries(this.pids)) {
      this.startCpu.set(name, cpuSeconds(pid) ?? NaN);
      this.rss.set(name, []);
    }
    this.sampleRss();
    this.timer = setInterval(() => this.sampleRss(), this.sampleMs);
    this.timer.unref();
    return this;
  }

  private sampleRss(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const r = rssMb(pid);
      if (r !== undefined) this.rss.get(name)!.push(r);
    }
  }

  stop(): WindowFigures {
    if (this.timer) clearInterval(this.timer);
    this.sampleRss();
    const seconds = (performance.now() - this.startedAt) / 1000;
    const procs: Record<string, ProcFigures> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const cpu = (cpuSeconds(pid) ?? NaN) - (this.startCpu.get(name) ?? NaN);
      const samples = this.rss.get(name) ?? [];
      procs[name] = {
        cpuPct: (cpu / seconds) * 100,
        rssAvgMb: samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : NaN,
        rssMaxMb: samples.length ? Math.max(...samples) : NaN,
        rssEndMb: samples.length ? samples[samples.length - 1]! : NaN,
      };
    }
    const end = systemTicks();
    let machineBusyPct = NaN,
      stealPct = NaN;
    if (end && this.startSys) {
      const total = end.total - this.startSys.total;
      if (total > 0) {
        machineBusyPct = ((end.busy - this.startSys.busy) / total) * 100;
        stealPct = ((end.steal - this.startSys.steal) / total) * 100;
      }
    }
    const ours = Object.values(procs).reduce((a, p) => a + (Number.isFinite(p.cpuPct) ? p.cpuPct : 0), 0);
    const othersPct = Math.max(0, machineBusyPct * os.cpus().length - ours);
    return { seconds, procs, machineBusyPct, stealPct, othersPct };
  }
}
