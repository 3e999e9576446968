import { runAgentCommand } from '../agent/cli.ts';

/**
 * Entry point of monitor-agent, compiled into dist/agent.mjs (`make build`), which the launcher
 * bin/monitor-agent imports; the commands live in agent/cli.ts. `launcher` is the launcher's own
 * path, written into the systemd unit by `service install`: this module's location says nothing
 * about it once bundled.
 */
export async function main(argv: string[], launcher: string): Promise<void> {
  await runAgentCommand(argv, launcher);
}
