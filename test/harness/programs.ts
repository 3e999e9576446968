/**
 * The programs the suites run: the launchers bin/monitor-backend, bin/monitor-agent and bin/monitorctl, which import
 * the compiled dist/*.mjs (docs/operations.md#compiled-programs). dist/ is rebuilt here, once per
 * process, when it is not the build of the current sources, so a suite run on its own (without
 * test/run.ts, which builds first) or a benchmark never runs stale programs.
 */
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../../deploy/build/build.ts';

const rebuilt = await buildIfStale();
if (rebuilt !== undefined) process.stderr.write(`[harness] dist/ was stale (${rebuilt}): rebuilt\n`);

export const BACKEND_BIN = fileURLToPath(new URL('../../bin/monitor-backend', import.meta.url));
export const AGENT_BIN = fileURLToPath(new URL('../../bin/monitor-agent', import.meta.url));
export const MONITORCTL_BIN = fileURLToPath(new URL('../../bin/monitorctl', import.meta.url));
