import { completionCommand } from './completion.ts';
import { configCommands } from './config.ts';
import { configureCommand } from './configure.ts';
import { describeTypeCommand } from './describe-type.ts';
import { dumpCommand } from './dump.ts';
import { eventOpsCommands } from './event-ops.ts';
import { fileCommands } from './files.ts';
import type { CommandGroup } from './registry.ts';
import { resourceCommands } from './resources.ts';
import { sessionCommands } from './session.ts';
import { silencedOpsCommands } from './silenced-ops.ts';
import { userOpsCommands } from './user-ops.ts';
import { versionCommand } from './version.ts';

/**
 * Every command group, in registration order (which is also the order of --help). A group that adds
 * subcommands to another (`check execute` to `check`) comes after it (docs/cli.md#extending).
 */
export const COMMAND_GROUPS: CommandGroup[] = [
  configureCommand,
  configCommands,
  sessionCommands,
  resourceCommands,
  eventOpsCommands,
  silencedOpsCommands,
  userOpsCommands,
  describeTypeCommand,
  fileCommands,
  dumpCommand,
  completionCommand,
  versionCommand,
];
