import { runBackendCommand } from '../gateway/node/cli.ts';

/**
 * Entry point of monitor-backend, compiled into dist/backend.mjs (`make build`), which the launcher
 * bin/monitor-backend imports; the commands live in gateway/node/. `launcher` is the launcher's own
 * path, written into the systemd unit by `service install`.
 */
export async function main(argv: string[], launcher: string): Promise<void> {
  await runBackendCommand(argv, launcher);
}
