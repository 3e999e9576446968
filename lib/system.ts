import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import type * as v from 'valibot';
import type { System } from '../proto/schemas/entity.ts';

// Host facts for `entity.system`, in the vocabulary Sensu's agents report (Go GOOS/GOARCH names,
// gopsutil platform families) so filters and dashboards written for them keep matching. Collected on
// every keepalive, so it must stay cheap and must never throw: a missing fact is left out instead.

export type SystemInfo = v.InferOutput<typeof System>;

const GOOS: Record<string, string> = { win32: 'windows', sunos: 'solaris' };
const GOARCH: Record<string, string> = { x64: 'amd64', ia32: '386', ppc64: 'ppc64le', mipsel: 'mipsle' };

// Families as gopsutil names them; an unknown distribution falls back to its ID_LIKE.
const FAMILY: Record<string, string> = {
  debian: 'debian',
  ubuntu: 'debian',
  linuxmint: 'debian',
  raspbian: 'debian',
  pop: 'debian',
  rhel: 'rhel',
  redhat: 'rhel',
  centos: 'rhel',
  rocky: 'rhel',
  almalinux: 'rhel',
  ol: 'rhel',
  oracle: 'rhel',
  scientific: 'rhel',
  amzn: 'rhel',
  amazon: 'rhel',
  cloudlinux: 'rhel',
  fedora: 'fedora',
  suse: 'suse',
  sles: 'suse',
  opensuse: 'suse',
  'opensuse-leap': 'suse',
  'opensuse-tumbleweed': 'suse',
  arch: 'arch',
  manjaro: 'arch',
  gentoo: 'gentoo',
  alpine: 'alpine',
  coreos: 'coreos',
};

const goArch = (arch: string): string => GOARCH[arch] ?? arch;
const goOs = (platform: string): string => GOOS[platform] ?? platform;

/** KEY=value lines of os-release(5), with optional quotes. */
function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2]!.trim();
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    out[m[1]!] = value;
  }
  return out;
}

function platformOf(release: Record<string, string>): {
  platform: string;
  platform_family: string;
  platform_version: string;
} {
  const id = (release.ID ?? '').toLowerCase();
  const like = (release.ID_LIKE ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const family = FAMILY[id] ?? like.map((l) => FAMILY[l]).find(Boolean) ?? like[0] ?? '';
  return { platform: id, platform_family: family, platform_version: release.VERSION_ID ?? '' };
}

// The distribution does not change while the agent runs; read the file once.
let osRelease: Record<string, string> | undefined;
function readOsRelease(): Record<string, string> {
  if (osRelease) return osRelease;
  osRelease = {};
  for (const path of ['/etc/os-release', '/usr/lib/os-release']) {
    try {
      osRelease = parseOsRelease(readFileSync(path, 'utf8'));
      break;
    } catch {
      /* try the next one */
    }
  }
  return osRelease;
}

const NO_MAC = '00:00:00:00:00:00';

function interfaces(): NonNullable<NonNullable<SystemInfo['network']>['interfaces']> {
  let all: NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  try {
    all = os.networkInterfaces();
  } catch {
    return [];
  }
  return Object.entries(all).map(([name, infos = []]) => {
    const mac = infos.find((i) => i.mac && i.mac !== NO_MAC)?.mac;
    const addresses = infos.map((i) => i.cidr ?? i.address);
    return mac ? { name, mac, addresses } : { name, addresses };
  });
}

export function systemInfo(): SystemInfo {
  const goos = goOs(process.platform);
  const platform =
    goos === 'linux'
      ? platformOf(readOsRelease())
      : { platform: goos, platform_family: '', platform_version: safe(os.release) };
  return {
    hostname: safe(os.hostname),
    os: goos,
    ...platform,
    arch: goArch(process.arch),
    network: { interfaces: interfaces() },
  };
}

function safe(fn: () => string): string {
  try {
    return fn();
  } catch {
    return '';
  }
}
