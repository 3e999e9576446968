// Locates the executables of the embedded services. Debian installs nats-server into /usr/sbin,
// which is not on an ordinary user's PATH, so the sbin folders are searched as well.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

// haproxy: the load balancer of a local cluster (deploy/local/cluster), installed by Debian into /usr/sbin too.
type EmbeddedBinary = 'etcd' | 'nats-server' | 'haproxy';

const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/sbin'];

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of `name`, or undefined when it is installed nowhere we look. */
export function resolveBinary(name: EmbeddedBinary): string | undefined {
  const pathDirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  const seen = new Set<string>();
  for (const dir of [...pathDirs, ...EXTRA_DIRS]) {
    if (seen.has(dir)) continue;
    seen.add(dir);
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
