import { Command, Option } from 'commander';
import { COMMAND_GROUPS } from './commands/index.ts';
import { versionLine } from '../proto/version.ts';
import { ENV } from './config/settings.ts';
import type { CliDeps } from './deps.ts';

/**
 * The program: its global options, which commander takes before or after any subcommand
 * (`monitorctl --namespace x check list` = `monitorctl check list --namespace x`), and every group
 * of COMMAND_GROUPS. Commander never exits the process itself: its errors are thrown (exitOverride)
 * and cli/main.ts turns them into exit codes.
 */
export function buildProgram(deps: CliDeps): Command {
  const program = new Command('monitorctl');
  program
    .description('command-line client of the monitor REST API')
    .usage('<command> [options]')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => deps.io.stdout.write(s),
      writeErr: (s) => deps.io.stderr.write(s),
      outputError: (s, write) => write(`Error: ${s.replace(/^error: /, '')}`),
    })
    .configureHelp({ showGlobalOptions: true })
    .version(versionLine('monitorctl'), '--version', 'print the version')
    .addOption(new Option('--url <url>', `URL of the API (${ENV.url})`))
    .addOption(new Option('--api-key <key>', `API key to authenticate with (${ENV.apiKey})`))
    .addOption(new Option('--namespace <namespace>', `namespace of namespaced resources (${ENV.namespace})`))
    .addOption(
      new Option('--timeout <duration>', `time a request may take: 15, 30s, 2m (${ENV.timeout}; 15s)`),
    )
    .addOption(new Option('--context <name>', `saved context to use (${ENV.context})`))
    .addOption(
      new Option(
        '--format <format>',
        `tabular, json, wrapped-json, yaml, template=TEXT or jsonpath=TEXT (${ENV.format})`,
      ),
    )
    .addOption(
      new Option('--trusted-ca-file <path>', `PEM file of the authorities to trust (${ENV.trustedCaFile})`),
    )
    .addOption(
      new Option(
        '--insecure-skip-tls-verify',
        `do not check the server's certificate (${ENV.insecureSkipTlsVerify})`,
      ),
    )
    .addHelpText(
      'after',
      '\nSettings come from a flag, else a MONITOR_ variable, else the saved context (docs/cli.md).\n' +
        `Exit status: 0 ok, 2 usage, 3 not found, 4 not authenticated or not allowed, 5 any other failure.`,
    );
  for (const group of COMMAND_GROUPS) group.register(program, deps);
  return program;
}
