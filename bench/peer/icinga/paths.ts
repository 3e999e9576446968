/**
 * Where one Icinga 2 instance keeps its files: everything under one temporary directory, passed
 * as `-D` constants on every icinga2 command line, so neither the daemon nor the `pki` commands
 * touch /etc/icinga2, /var/lib/icinga2, /var/log/icinga2 or /run/icinga2. They run as the current
 * user (the package's default user `nagios` could not write our directories, and dropping to it
 * is beside the point here).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The local node's name: the API certificate's common name and the Endpoint/Zone object names. */
export const NODE_NAME = 'bench-icinga';

export interface InstanceDirs {
  root: string;
  config: string;
  data: string;
  log: string;
  cache: string;
  spool: string;
  run: string;
}

/** The directory layout below `root`, created. */
export function instanceDirs(root: string): InstanceDirs {
  const d = {
    root,
    config: path.join(root, 'etc'),
    data: path.join(root, 'data'),
    log: path.join(root, 'log'),
    cache: path.join(root, 'cache'),
    spool: path.join(root, 'spool'),
    run: path.join(root, 'run'),
  };
  for (const dir of Object.values(d)) fs.mkdirSync(dir, { recursive: true });
  return d;
}

function currentGroup(): string {
  try {
    return execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();
  } catch {
    return String(os.userInfo().gid);
  }
}

/** The `-D` constants for an icinga2 command working in `d`. */
export function defines(d: InstanceDirs): string[] {
  const consts: Record<string, string> = {
    ConfigDir: d.config,
    DataDir: d.data,
    LogDir: d.log,
    CacheDir: d.cache,
    SpoolDir: d.spool,
    InitRunDir: d.run,
    RunAsUser: os.userInfo().username,
    RunAsGroup: currentGroup(),
    NodeName: NODE_NAME,
    ZoneName: NODE_NAME,
  };
  return Object.entries(consts).map(([k, v]) => `-D${k}=${v}`);
}
