import { fileURLToPath } from 'node:url';
import { runAgentCommand } from '../agent/cli.ts';

// Entry point of monitor-agent (bin/monitor-agent runs it through tsx); the commands live in
// agent/cli.ts. The launcher's own path goes in the systemd unit `service install` writes.
await runAgentCommand(process.argv.slice(2), fileURLToPath(new URL('./monitor-agent', import.meta.url)));
