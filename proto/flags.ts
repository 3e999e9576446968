// The shape of a program's command-line flags and the one error a bad configuration raises; the
// loading itself (flags, environment, file, defaults) is lib/config-loader.ts.

type FlagType = 'string' | 'int' | 'float' | 'bool' | 'list' | 'map';

export interface FlagSpec {
  name: string;
  type: FlagType;
  description: string;
  default?: unknown;
  /** Environment variable when it does not follow the `<PREFIX><NAME>` rule. */
  env?: string;
  short?: string;
  /** Deprecated spelling accepted on the command line and in files. */
  alias?: string;
}

/** A configuration problem: one line naming the flag; programs exit with status 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
