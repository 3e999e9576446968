import { versionLine } from '../../proto/version.ts';
import type { CommandGroup } from './registry.ts';

export const versionCommand: CommandGroup = {
  register(program, deps) {
    program
      .command('version')
      .description('print the version')
      .action(() => {
        deps.out.write(`${versionLine('monitorctl')}\n`);
      });
  },
};
