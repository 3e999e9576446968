/**
 * Our side of `make bench-peer` on its own: node --import tsx bench/peer/ours/main.ts [memory]
 * [startup] [--profile]. Prints the memory per monitored object and the start-up times (both when
 * neither is named); knobs in ./config.ts. Progress on stderr, figures on stdout.
 */
import { block } from '../../lib/format.ts';
import { peerOursConfig } from './config.ts';
import { measureMemoryPerObject } from './memory.ts';
import { memoryLines, startupLines } from './report.ts';
import { measureStartup } from './startup.ts';

const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith('--'));
const want = (what: string) => named.length === 0 || named.includes(what);
const cfg = peerOursConfig(args);

if (want('memory')) {
  const f = await measureMemoryPerObject(cfg);
  process.stdout.write(block('peer (ours): memory per monitored object', memoryLines(f)) + '\n');
}
if (want('startup')) {
  const f = await measureStartup(cfg);
  process.stdout.write(block('peer (ours): start-up to a ready API', startupLines(f)) + '\n');
}
