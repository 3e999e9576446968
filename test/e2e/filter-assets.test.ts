// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { coreApi, fresh } from '../harness/api.ts';
import { pipelineKit } from '../harness/pipeline-kit.ts';
import { freePort, sleep, startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';

// `runtime_assets` of event filters (docs/compatibility.md#filter-runtime-assets), end to end: real
// asset tarballs served by a test HTTP server, fetched and verified (SHA-512) by the backend, their
// JavaScript files run in the filter's sandbox before its expressions.

let backend: Backend;
let root: string;
let server: http.Server;
let base: string;
const served = new Map<string, Buffer>();
const requests: string[] = [];
const api = coreApi(() => backend);
const { fileHandler, events, put, postEvent } = pipelineKit(api, () => root);

/** A gzipped tar of `files` (path → content), served at /<name>.tar.gz; its SHA-512. */
function asset(name: string, files: Record<string, string>): string {
  const src = join(root, `src-${name}`);
  for (const [p, content] of Object.entries(files)) {
    mkdirSync(join(src, p, '..'), { recursive: true });
    writeFileSync(join(src, p), content);
  }
  const archive = join(root, `${name}.tar.gz`);
  execFileSync('tar', ['-czf', archive, '-C', src, '.']);
  const data = readFileSync(archive);
  served.set(`/${name}.tar.gz`, data);
  return createHash('sha512').update(data).digest('hex');
}

test.before(async () => {
  root = tempDir('filter-assets');
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const data = served.get(req.url ?? '');
    res.writeHead(data ? 200 : 404);
    res.end(data);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  base = `http://127.0.0.1:${port}`;
  backend = await startBackend({ name: 'filter-assets' });
});

test.after(async () => {
  await backend?.stop();
  server?.closeAllConnections();
  await new Promise<void>((r) => server?.close(() => r()));
});

/** Posts events with these statuses through `handler`; the statuses it got once `control` has them all. */
async function through(handler: string, dir: string, statuses: number[]): Promise<number[]> {
  const control = await fileHandler(`${handler}-control`);
  const entity = fresh('fa');
  for (const [i, status] of statuses.entries())
    await postEvent(entity, {
      metadata: { name: `c${i}` },
      status,
      output: 'x',
      handlers: [handler, `${handler}-control`],
    });
  await waitFor(() => (events(control).length >= statuses.length ? true : undefined), {
    timeoutMs: 20000,
    what: 'the control handler to get every event',
  });
  await sleep(500);
  return events(dir)
    .filter((e) => e.entity.metadata.name === entity)
    .map((e) => e.check.status)
    .sort();
}

test("the asset's JavaScript files are loaded before the expression, which uses them", async () => {
  const sha512 = asset('severity-js', {
    'lib/severity.js': 'function isSevere(e) { return e.check.status >= SEVERE.level; }',
    // Loaded in path order: lib/a-config.js before lib/severity.js; both before the expression.
    'lib/a-config.js': 'var SEVERE = { level: 2 };',
    'README.md': 'not JavaScript: not loaded',
  });
  await put('assets', 'severity-js', { url: `${base}/severity-js.tar.gz`, sha512 });
  await put('filters', 'severe-only', {
    action: 'allow',
    expressions: ['isSevere(event)'],
    runtime_assets: ['severity-js'],
  });
  const dir = await fileHandler('h-severe', { filters: ['severe-only'] });
  assert.equal(await through('h-severe', dir, [0, 1, 2, 2]), [2, 2]);
  // Fetched once, then served from <state-dir>/assets for every later event.
  assert.is(requests.filter((r) => r === '/severity-js.tar.gz').length, 1);
  assert.equal(await through('h-severe', dir, [2, 1]), [2]);
  assert.is(requests.filter((r) => r === '/severity-js.tar.gz').length, 1);
});

test('library code runs only in the sandbox: no host objects, no code generation, frozen after loading', async () => {
  const sha512 = asset('probe-js', {
    'probe.js': [
      'var HOST = [typeof process, typeof require, typeof console, typeof setTimeout].join(",");',
      'var GEN = (function () { try { return (function () {}).constructor("return 1")(); } catch (e) { return e.name; } })();',
      'var STATE = { n: 0 };',
    ].join('\n'),
  });
  await put('assets', 'probe-js', { url: `${base}/probe-js.tar.gz`, sha512 });
  await put('filters', 'probe', {
    action: 'allow',
    expressions: [
      'HOST === "undefined,undefined,undefined,undefined"',
      'GEN === "EvalError"',
      // A library's state is frozen with the rest: no evaluation sees what another did.
      '(STATE.n++, STATE.n === 0)',
    ],
    runtime_assets: ['probe-js'],
  });
  const dir = await fileHandler('h-probe', { filters: ['probe'] });
  assert.equal(await through('h-probe', dir, [1, 2]), [1, 2]);
});

test('an asset that does not verify, or a library that throws, fails the filter closed and says why', async () => {
  asset('tampered-js', { 'lib/x.js': 'var OK = true;' });
  await put('assets', 'tampered-js', { url: `${base}/tampered-js.tar.gz`, sha512: 'a'.repeat(128) });
  const throwing = asset('throwing-js', { 'lib/boom.js': 'throw new Error("library boom");' });
  await put('assets', 'throwing-js', { url: `${base}/throwing-js.tar.gz`, sha512: throwing });
  for (const [name, assetName] of [
    ['tampered', 'tampered-js'],
    ['throwing', 'throwing-js'],
  ]) {
    await put('filters', `allow-${name}`, {
      action: 'allow',
      expressions: ['true'],
      runtime_assets: [assetName],
    });
    await put('filters', `deny-${name}`, {
      action: 'deny',
      expressions: ['true'],
      runtime_assets: [assetName],
    });
  }
  const allowT = await fileHandler('h-allow-tampered', { filters: ['allow-tampered'] });
  const denyT = await fileHandler('h-deny-tampered', { filters: ['deny-tampered'] });
  const allowX = await fileHandler('h-allow-throwing', { filters: ['allow-throwing'] });
  const denyX = await fileHandler('h-deny-throwing', { filters: ['deny-throwing'] });
  assert.equal(await through('h-allow-tampered', allowT, [2]), [], 'a failing allow filter drops');
  assert.equal(await through('h-deny-tampered', denyT, [2]), [2], 'a failing deny filter denies nothing');
  assert.equal(await through('h-allow-throwing', allowX, [2]), []);
  assert.equal(await through('h-deny-throwing', denyX, [2]), [2]);
  const why = (filter: string) =>
    backend.logs().find((l) => l.msg?.startsWith('filter expression failed') && l.filter === filter)?.error;
  assert.match(
    why('allow-tampered'),
    /runtime assets tampered-js: asset tampered-js: SHA-512 of the download is [0-9a-f]+, expected a+/,
  );
  assert.is(why('allow-throwing'), 'library throwing-js/lib/boom.js failed: Error: library boom');
});

test.run();
