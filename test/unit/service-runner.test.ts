import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';
import { provider, service, ServiceRunner } from '../../gateway/node/service.ts';

// The backend node's lifecycle: services start in order, stop in reverse, and a failed start stops
// what had started before it.

function recorder() {
  const steps: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('info', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  const svc = (name: string, fail?: 'start' | 'stop') =>
    service(
      name,
      async () => {
        if (fail === 'start') throw new Error(`${name} cannot start`);
        steps.push(`start ${name}`);
      },
      async () => {
        if (fail === 'stop') throw new Error(`${name} cannot stop`);
        steps.push(`stop ${name}`);
      },
    );
  return { steps, lines, log, svc };
}

test('starts in order, stops in reverse, once', async () => {
  const r = recorder();
  const runner = new ServiceRunner(r.log);
  await runner.start([r.svc('a'), r.svc('b'), r.svc('c')]);
  await runner.stop();
  await runner.stop();
  assert.equal(r.steps, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  assert.equal(
    r.lines.filter((l) => l.msg === 'service started').map((l) => l.service),
    ['a', 'b', 'c'],
  );
  assert.equal(
    r.lines.filter((l) => l.msg === 'service stopped').map((l) => l.service),
    ['c', 'b', 'a'],
  );
});

test('a failed start stops the services started before it, not itself, and rethrows', async () => {
  const r = recorder();
  const runner = new ServiceRunner(r.log);
  const err = await runner.start([r.svc('a'), r.svc('b'), r.svc('c', 'start'), r.svc('d')]).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.is(err?.message, 'c cannot start');
  assert.equal(r.steps, ['start a', 'start b', 'stop b', 'stop a']);
  assert.ok(
    r.lines.some((l) => l.level === 'error' && l.msg === 'service start failed' && l.service === 'c'),
  );
});

test('a failed stop is logged and the others still stop', async () => {
  const r = recorder();
  const runner = new ServiceRunner(r.log);
  await runner.start([r.svc('a'), r.svc('b', 'stop'), r.svc('c')]);
  await runner.stop();
  assert.equal(r.steps, ['start a', 'start b', 'start c', 'stop c', 'stop a']);
  assert.ok(
    r.lines.some(
      (l) =>
        l.level === 'warn' &&
        l.msg === 'stop step failed' &&
        l.service === 'b' &&
        l.error === 'b cannot stop',
    ),
  );
});

test('a provider hands out what it made only while it runs', async () => {
  const p = provider('thing', async () => ({ n: 1 }));
  assert.throws(() => p.get(), /thing is used before it started/);
  await p.start();
  assert.equal(p.get(), { n: 1 });
  await p.stop();
  assert.throws(() => p.get());
});

test.run();
