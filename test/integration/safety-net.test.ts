import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { Proc } from '../harness/index.ts';

// lib/safety-net.ts in a real process (test/fixtures/safety-net.ts): an unhandled rejection is one
// JSON log line and the process runs on; an uncaught exception is one JSON log line and exit 70.
// Neither line carries the credentials of a URL in the error's message.

const FIXTURE = fileURLToPath(new URL('../fixtures/safety-net.ts', import.meta.url));
const procs: Proc[] = [];
const run = (mode: string) => {
  const p = Proc.start(`safety-net-${mode}`, process.execPath, ['--import', 'tsx', FIXTURE, mode]);
  procs.push(p);
  return p;
};

test.after(async () => {
  for (const p of procs) if (p.running) await p.kill();
});

test('an unhandled rejection is logged as one error line and the process keeps running', async () => {
  const p = run('reject');
  await p.waitForLine((l) => l === 'alive', 10_000);
  assert.ok(p.running, 'still running after the rejection');
  const lines = p.jsonLines('stderr');
  assert.is(lines.length, 1, p.tail());
  const [line] = lines;
  assert.is(line!.level, 'error');
  assert.is(line!.msg, 'unhandled promise rejection; running on');
  assert.is(line!.name, 'Error');
  assert.is(line!.error, 'cannot reach nats://***@127.0.0.1:4222');
  assert.match(line!.stack, /^\s+at /);
  assert.not.match(p.tail(), /s3cr3t/);
  assert.is((await p.exited).code, 0);
});

test('an uncaught exception is logged as one error line and the process exits with status 70', async () => {
  const p = run('throw');
  const exit = await p.exited;
  assert.is(exit.code, 70, p.tail());
  await p.drained();
  assert.not.ok(p.lines('stdout').includes('alive'), 'stopped before running on');
  const lines = p.jsonLines('stderr');
  assert.is(lines.length, 1, p.tail());
  assert.is(lines[0]!.level, 'error');
  assert.is(lines[0]!.msg, 'uncaught exception; stopping');
  assert.is(lines[0]!.name, 'TypeError');
  assert.is(lines[0]!.error, 'broken state near nats://***@127.0.0.1:4222');
  assert.not.match(p.tail(), /s3cr3t/);
});

test("Node's process warnings are JSON log lines, once per code, without URL credentials", async () => {
  const p = run('warn');
  assert.is((await p.exited).code, 0, p.tail());
  await p.drained();
  const lines = p.jsonLines('stderr');
  assert.equal(
    lines.map((l) => [l.level, l.msg, l.code, l.warning]),
    [
      ['warn', 'node warning', 'DEP9999', 'old API used near nats://***@127.0.0.1:4222'],
      ['warn', 'node warning', 'X1', 'something else'],
    ],
    p.tail(),
  );
  assert.is(p.lines('stderr').length, 2, 'nothing else on stderr');
});

test.run();
