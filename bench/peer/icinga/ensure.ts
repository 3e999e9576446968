/**
 * The icinga2 binary for the peer benchmark: Debian's package, installed on demand (as root) when
 * it is missing. The package's own service must not run beside the instances the benchmark starts
 * (it would listen on 5665 and use CPU and memory in the measured windows), so any icinga2 process
 * that appears during the install is stopped again.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { note } from '../../lib/format.ts';

const ICINGA_BIN = '/usr/sbin/icinga2';

/**
 * Pids of running icinga2 processes (by exact command name). Zombies are left out: a child of the
 * daemon that outlives it is reparented to pid 1 and shows as `<defunct>` until that reaps it.
 */
export function icingaPids(): number[] {
  const r = spawnSync('pgrep', ['-x', 'icinga2'], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => /^\d+$/.test(l.trim()))
    .map(Number)
    .filter((pid) => !zombie(pid));
}

function zombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true; // gone
  }
}

function executable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Returns the path of icinga2, installing the Debian package first when it is not there. */
export function ensureIcinga(): string {
  if (executable(ICINGA_BIN)) return ICINGA_BIN;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${ICINGA_BIN} not found and this is not root: install it with ` +
        '`apt-get install -y --no-install-recommends icinga2` (Debian) and run again',
    );
  }
  const before = new Set(icingaPids());
  note('icinga2 not found: apt-get install -y --no-install-recommends icinga2');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'icinga2'], {
      env,
      stdio: ['ignore', 2, 2],
    });
  let r = install();
  if (r.status !== 0) {
    // A machine whose package lists were never fetched knows no candidate: fetch them once.
    spawnSync('apt-get', ['update'], { env, stdio: ['ignore', 2, 2] });
    r = install();
  }
  if (r.status !== 0 || !executable(ICINGA_BIN)) {
    throw new Error(`apt-get install icinga2 failed (exit ${r.status}); ${ICINGA_BIN} is still missing`);
  }
  stopPackageService(before);
  return ICINGA_BIN;
}

/**
 * Stops and disables the service the package may have started (containers usually forbid it
 * through policy-rc.d; a machine with systemd does not), then kills what is still running by pid.
 */
function stopPackageService(before: Set<number>): void {
  const started = () => icingaPids().filter((p) => !before.has(p));
  if (started().length === 0) return;
  note('the icinga2 package started its service: stopping and disabling it');
  for (const cmd of [
    ['systemctl', 'disable', '--now', 'icinga2'],
    ['service', 'icinga2', 'stop'],
  ]) {
    spawnSync(cmd[0]!, cmd.slice(1), { stdio: 'ignore' });
    if (started().length === 0) return;
  }
  for (const pid of started()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** "2.13.6-…" from `icinga2 --version`'s first line, for the figure block. */
export function icingaVersion(bin: string): string {
  try {
    const first = execFileSync(bin, ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? '';
    return /\(version: r?([^)]+)\)/.exec(first)?.[1] ?? first.trim();
  } catch {
    return '?';
  }
}
