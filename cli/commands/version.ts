import { VERSION } from '../../proto/version.ts';
import type { CommandGroup } from './registry.ts';

/** The line `monitorctl version` and `--version` print, shaped like `monitor-backend version X`. */
export const versionLine = () => `monitorctl version ${VERSION}`;

export const versionCommand: CommandGroup = {
  register(program, deps) {
    program
      .command('version')
      .description('print the version')
      .action(() => {
        deps.out.write(`${versionLine()}\n`);
      });
  },
};
