import { CommanderError } from 'commander';
import { makeDeps, type CliIo } from './deps.ts';
import { CliError, EXIT_CODES } from './errors.ts';
import { buildProgram } from './program.ts';

/**
 * Runs one monitorctl command; returns its exit status (docs/cli.md#exit-codes). Every failure is
 * one line on stderr: a usage error (2), a resource not found (3), a refused credential (4), or any
 * other failure (5). No stack is printed unless MONITOR_DEBUG=1.
 */
export async function runCli(argv: string[], io: CliIo, env: NodeJS.ProcessEnv): Promise<number> {
  const deps = makeDeps(io, env);
  try {
    await buildProgram(deps).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with these codes; anything else commander refused is a usage error
      // (it has printed its own line already).
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      return EXIT_CODES.usage;
    }
    if (err instanceof CliError) {
      io.stderr.write(`Error: ${err.message}\n`);
      return err.exitCode;
    }
    const e = err as Error;
    io.stderr.write(`Error: ${e?.message ?? String(err)}\n`);
    if (env.MONITOR_DEBUG === '1' && e?.stack) io.stderr.write(`${e.stack}\n`);
    return EXIT_CODES.failure;
  }
}
