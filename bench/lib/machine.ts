/** A description of the machine the figures were taken on. */
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { maxOpenFiles } from './procstat.ts';

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1]!.trim();
  } catch {
    /* not Linux */
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

function version(cmd: string, args: string[], pattern: RegExp): string {
  try {
    const out = execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 5000,
    });
    return pattern.exec(out)?.[1] ?? out.trim().split('\n')[0] ?? '?';
  } catch {
    return '?';
  }
}

export function describeMachine(binaries: { etcd?: string; nats?: string } = {}): string[] {
  const cores = os.cpus().length;
  const memGb = os.totalmem() / 2 ** 30;
  const [l1, l5] = os.loadavg();
  const lines = [
    `cpu        ${cores} x ${cpuModel()}`,
    `memory     ${memGb.toFixed(1)} GiB`,
    `kernel     ${os.type()} ${os.release()}`,
    `node       ${process.version}`,
    `fd limit   ${maxOpenFiles()} (this process)`,
    `load avg   ${l1!.toFixed(2)} (1 min), ${l5!.toFixed(2)} (5 min) at start; other work on the machine skews figures`,
  ];
  if (binaries.etcd)
    lines.push(
      `etcd       ${version(binaries.etcd, ['--version'], /etcd Version:\s*(\S+)/)} (${binaries.etcd})`,
    );
  if (binaries.nats)
    lines.push(`nats       ${version(binaries.nats, ['--version'], /v(\d+\.\d+\.\d+)/)} (${binaries.nats})`);
  return lines;
}
