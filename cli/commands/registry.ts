import type { Command } from 'commander';
import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';

/**
 * A module of commands: `register` adds its commands to the program (or subcommands to a group
 * registered before it, found with `groupCommand`). cli/commands/index.ts lists every group in
 * registration order (docs/cli.md#extending).
 */
export interface CommandGroup {
  register(program: Command, deps: CliDeps): void;
}

/** A command registered earlier (`check`, `config`), to add subcommands to it. */
export function groupCommand(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
  if (!found) throw new Error(`no command group "${name}" is registered (cli/commands/index.ts order)`);
  return found;
}

/** Reads a positive whole number option (`--chunk-size`). */
export function positiveInt(flag: string) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw) || Number(raw) <= 0)
      throw usageError(`${flag}: "${raw}" is not a positive whole number`);
    return Number(raw);
  };
}
