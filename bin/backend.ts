import { runBackendCommand } from '../gateway/node/cli.ts';

// Entry point of monitor-backend (bin/monitor-backend runs it through tsx); the commands live in
// gateway/node/.
await runBackendCommand(process.argv.slice(2));
