import { runBackendCommand } from '../gateway/node/cli.ts';

/**
 * Entry point of monitor-backend, compiled into dist/backend.mjs (`make build`), which the launcher
 * bin/monitor-backend imports; the commands live in gateway/node/.
 */
export async function main(argv: string[]): Promise<void> {
  await runBackendCommand(argv);
}
