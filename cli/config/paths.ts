import { join } from 'node:path';
import { usageError } from '../errors.ts';

// Where monitorctl keeps its configuration: $XDG_CONFIG_HOME/monitor, or ~/.config/monitor
// (docs/cli.md#configuration-file).

const FILE_NAME = 'monitorctl.json';

/** The folder of the configuration file. */
function configDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says a relative value is to be ignored.
  if (xdg && xdg.startsWith('/')) return join(xdg, 'monitor');
  const home = env.HOME;
  if (!home) throw usageError('neither XDG_CONFIG_HOME nor HOME is set: no place for the configuration file');
  return join(home, '.config', 'monitor');
}

export const configFile = (env: NodeJS.ProcessEnv): string => join(configDir(env), FILE_NAME);
