// suite-timeout: 180
// suite-exclusive: asserts /health answers within 2 s while sandbox bombs (endless loops, memory) run in filters
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { coreApi, fresh } from '../harness/api.ts';
import { pipelineKit } from '../harness/pipeline-kit.ts';
import { sleep, startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';

// Filter expressions run in the JavaScript sandbox: hostile ones (endless loops, memory bombs, async
// code) must neither end, bloat nor freeze the backend, and a failing one must fail closed. Apart
// from pipeline.test.ts because its /health bound needs the CPU to itself.

let backend: Backend;
let root: string;
const api = coreApi(() => backend);
const { fileHandler, events, put, postEvent } = pipelineKit(api, () => root);

test.before(async () => {
  root = tempDir('pipeline-sandbox');
  backend = await startBackend({ name: 'pipeline-sandbox' });
});

test.after(async () => {
  await backend?.stop();
});

/** The most resident memory the backend's node process (not its embedded children) ever had, MiB. */
function backendPeakRssMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${backend.proc.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The backend still runs and answers within 2 s. */
async function backendAlive(what: string) {
  assert.ok(backend.proc.running, `${what}: the backend process is gone`);
  const t0 = Date.now();
  const h = await backend.health();
  assert.is(h.status, 200, what);
  assert.ok(Date.now() - t0 < 2000, `${what}: /health took ${Date.now() - t0} ms`);
}

/**
 * Allow and deny filters with each expression, a handler behind each, and events through them all
 * and through a control handler. Answers each handler's directory once the control got every event.
 */
async function throughFilters(prefix: string, attacks: Record<string, string>, count = 2) {
  const control = await fileHandler(`h-${prefix}-control`);
  const dirs: Record<string, string> = {};
  for (const [k, expr] of Object.entries(attacks)) {
    await put('filters', `${prefix}-allow-${k}`, {
      action: 'allow',
      expressions: ['event.check.status > 0', expr],
    });
    dirs[`allow-${k}`] = await fileHandler(`h-${prefix}-allow-${k}`, { filters: [`${prefix}-allow-${k}`] });
    await put('filters', `${prefix}-deny-${k}`, { action: 'deny', expressions: [expr] });
    dirs[`deny-${k}`] = await fileHandler(`h-${prefix}-deny-${k}`, { filters: [`${prefix}-deny-${k}`] });
  }
  const entity = fresh(prefix);
  const handlers = [`h-${prefix}-control`, ...Object.keys(dirs).map((k) => `h-${prefix}-${k}`)];
  for (let i = 0; i < count; i++) {
    await postEvent(entity, { metadata: { name: `${prefix}-${i}` }, status: 2, output: 'x', handlers });
    await backendAlive(`after event ${i}`);
  }
  const mine = (dir: string) => events(dir).filter((e) => e.entity?.metadata?.name === entity).length;
  await waitFor(() => (mine(control) >= count ? true : undefined), {
    timeoutMs: 20000,
    what: 'the control handler got every event',
  });
  return { dirs, mine };
}

test('filters: an allow filter whose expression fails drops the event; a deny filter whose expression fails denies nothing', async () => {
  // Regression (issue 13): an expression that never ended (or threw) was skipped, so its allow filter
  // let the event through.
  const attacks = { endless: '(function () { for (;;) {} })()', throws: 'event.nope.deeper == 1' };
  const { dirs, mine } = await throughFilters('fail', attacks);
  for (const k of Object.keys(attacks))
    await waitFor(() => (mine(dirs[`deny-${k}`]!) >= 2 ? true : undefined), {
      timeoutMs: 20000,
      what: `the failing deny filter fail-deny-${k} denied nothing`,
    });
  await sleep(1000);
  for (const k of Object.keys(attacks))
    assert.is(mine(dirs[`allow-${k}`]!), 0, `the failing allow filter fail-allow-${k} let an event through`);
  const warns = backend.logs().filter((l) => l.msg?.startsWith('filter expression failed'));
  for (const k of Object.keys(attacks))
    assert.is(
      warns.filter((l) => l.filter === `fail-allow-${k}`).length,
      1,
      `fail-allow-${k} logged once, not per event`,
    );
  await backendAlive('after the failing filters');
});

test('filters: memory bombs neither bloat nor freeze the backend', async () => {
  // Regression (issue 13): within its 100 ms the first grew the backend by ~1 GiB or froze it.
  const peak0 = backendPeakRssMiB();
  const attacks = {
    bomb: '(() => { let a = []; for (;;) a.push(new Uint8Array(1e8).fill(1)); })()',
    typed: '(() => { let a = []; for (;;) a.push(new Uint8Array(1e6).fill(1)); })()',
    strings: '(() => { let a = []; for (;;) a.push("x".repeat(1e6) + a.length); })()',
  };
  const { dirs, mine } = await throughFilters('bomb', attacks, 3);
  await sleep(1000);
  await backendAlive('after the memory bombs');
  const grown = backendPeakRssMiB() - peak0;
  assert.ok(grown < 200, `the backend's peak RSS grew by ${grown.toFixed(0)} MiB`);
  for (const k of Object.keys(attacks))
    assert.is(mine(dirs[`allow-${k}`]!), 0, `bomb-allow-${k} let an event through`);
});

test('filters: async code that throws or never ends neither crashes nor hangs the backend', async () => {
  // Regression (issue 13): a regex literal holding a quote fooled the old text check for `async`;
  // the rejected promise then reached the process's unhandled rejection handler, which ended it.
  const attacks = {
    crash: `/"/.test('') || (async () => { throw 1 })() || /"/`,
    pending: '(async () => { await 0; for (;;) {} })(), true',
  };
  const { dirs, mine } = await throughFilters('async', attacks);
  await sleep(1000);
  for (const k of Object.keys(attacks))
    assert.is(mine(dirs[`allow-${k}`]!), 0, `async-allow-${k} let an event through`);
  await backendAlive('after the async filters');
  assert.ok(
    backend.logs().some((l) => l.filter === 'async-allow-crash' && /Promise/.test(l.error)),
    'the promise result is the logged error',
  );
});

test.run();
