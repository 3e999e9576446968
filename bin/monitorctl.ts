import { runCli } from '../cli/main.ts';

/**
 * Entry point of monitorctl, compiled into dist/monitorctl.mjs (`make build`), which the launcher
 * bin/monitorctl imports; the commands live in cli/.
 */
export async function main(argv: string[]): Promise<number> {
  return runCli(argv, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, process.env);
}
