/**
 * `make build`: node --import tsx deploy/build/main.ts [--if-stale]
 * Bundles bin/*.ts into dist/*.mjs (./build.ts); with --if-stale, only when dist/ is not the build of
 * the current sources.
 */
import { build, buildIfStale } from './build.ts';

const started = performance.now();
if (process.argv.includes('--if-stale')) {
  const why = await buildIfStale();
  if (why !== undefined) process.stderr.write(`build: ${why}, rebuilt dist/ in ${ms()} ms\n`);
} else {
  const outputs = await build();
  process.stderr.write(`build: ${outputs.filter((o) => o.endsWith('.mjs')).join(', ')} in ${ms()} ms\n`);
}

function ms(): string {
  return (performance.now() - started).toFixed(0);
}
