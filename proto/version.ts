import { readFileSync } from 'node:fs';

// The one version of every program, from package.json so a release bumps a single place. The
// compiled programs have it inlined by the build (deploy/build/build.ts); run from the sources
// (tsx: tests, development), it is read from the file.
declare const MONITOR_BUILD_VERSION: string | undefined;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export const VERSION: string =
  typeof MONITOR_BUILD_VERSION === 'string' ? MONITOR_BUILD_VERSION : packageVersion();

/** The programs that print a version line. */
type Program = 'monitor-backend' | 'monitor-agent' | 'monitorctl';

/**
 * What `<program> version` prints, one shape for every program, so an operator confirming an
 * upgrade (docs/operations.md#upgrades) reads them all the same way: `monitor-agent version 1.2.3`.
 */
export const versionLine = (program: Program): string => `${program} version ${VERSION}`;
