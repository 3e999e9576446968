// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { coreApi, fresh } from '../harness/api.ts';
import { pipelineKit } from '../harness/pipeline-kit.ts';
import { startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';

// What a real backend logs where it used to repeat itself (docs/operations.md#logs): a handler an
// event names that does not exist is one warning per handler name, again only after it came and
// went; a stop hands off every shard with one summary line.

let backend: Backend;
let root: string;
const api = coreApi(() => backend);
const { fileHandler, waitEvents, postEvent } = pipelineKit(api, () => root);

test.before(async () => {
  root = tempDir('backend-logs');
  backend = await startBackend({ name: 'logs-1', logLevel: 'info' });
});

test.after(async () => {
  await backend?.stop();
});

const missingLines = (handler: string) =>
  backend.logs().filter((l) => l.msg === 'handler does not exist' && l.handler === handler);

/** Posts an event naming the existing handler `h-seen` and `missing`, and waits until h-seen had it. */
async function eventNaming(dir: string, missing: string): Promise<void> {
  const entity = fresh('logbox');
  await postEvent(entity, {
    metadata: { name: 'disk' },
    status: 2,
    output: 'x',
    handlers: ['h-seen', missing],
  });
  await waitEvents(dir, (e) => e.entity?.metadata?.name === entity, `event of ${entity} handled`);
}

test('a missing handler is one warning for many events, and warns again after it came and went', async () => {
  const seen = await fileHandler('h-seen');
  for (let i = 0; i < 4; i++) await eventNaming(seen, 'h-absent');
  const first = missingLines('h-absent');
  assert.is(first.length, 1, JSON.stringify(first));
  assert.is(first[0]!.level, 'warn');
  assert.is(first[0]!.namespace, 'default');

  // It appears: the next event reaches it, and no warning is logged.
  const absent = await fileHandler('h-absent');
  const entity = fresh('logbox');
  await postEvent(entity, {
    metadata: { name: 'disk' },
    status: 2,
    output: 'y',
    handlers: ['h-seen', 'h-absent'],
  });
  await waitEvents(absent, (e) => e.entity?.metadata?.name === entity, 'the handler that appeared');
  assert.is(missingLines('h-absent').length, 1);

  // It goes away again: one more warning, then silence.
  const del = await api('/namespaces/default/handlers/h-absent', 'DELETE');
  assert.is(del.status, 204);
  await waitFor(
    async () => {
      await eventNaming(seen, 'h-absent');
      return missingLines('h-absent').length === 2 || undefined;
    },
    { timeoutMs: 20_000, what: 'the second warning once the handler is gone' },
  );
  for (let i = 0; i < 3; i++) await eventNaming(seen, 'h-absent');
  assert.is(missingLines('h-absent').length, 2);
  assert.ok(missingLines('h-absent').every((l) => l.level === 'warn'));
});

test('a stop hands off every shard with one summary line: how many and how long', async () => {
  const health = await backend.health();
  const owned = health.body.shards.owned as number;
  assert.ok(owned > 0, `the node owns shards: ${JSON.stringify(health.body.shards)}`);
  const exit = await backend.stop();
  assert.is(exit.code, 0);
  const lines = backend.logs();
  assert.is(lines.filter((l) => l.msg === 'shard handed off').length, 0, 'no line per shard');
  const summary = lines.filter((l) => l.msg === 'shards handed off' && l.reason === 'shutdown');
  assert.is(summary.length, 1, JSON.stringify(summary));
  assert.is(summary[0]!.level, 'info');
  assert.is(summary[0]!.shards, owned);
  assert.type(summary[0]!.ms, 'number');
});

test.run();
