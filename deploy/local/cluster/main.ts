/**
 * A local cluster on 127.0.0.1 (docs/operations-local-cluster.md):
 *   node --import tsx deploy/local/cluster/main.ts up|down|status [--wipe]
 * `make cluster`, `make cluster-down` (CLUSTER_WIPE=1 for --wipe), `make cluster-wipe` and
 * `make cluster-status` run it.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { down } from './down.ts';
import { up } from './start.ts';
import { status } from './status.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const [command, ...rest] = process.argv.slice(2);
const wipe = rest.includes('--wipe') || process.env.CLUSTER_WIPE === '1';

const run: Record<string, () => Promise<number>> = {
  up: () => up(ROOT),
  down: () => down(ROOT, wipe),
  status: () => status(ROOT),
};
const action = command === undefined ? undefined : run[command];
if (!action) {
  process.stderr.write('usage: node --import tsx deploy/local/cluster/main.ts up|down|status [--wipe]\n');
  process.exit(2);
}
process.exit(await action());
