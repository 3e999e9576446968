import { readFileSync } from 'node:fs';

// The one version of every program, read from package.json so a release bumps a single place.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
export const VERSION: string = pkg.version;
