import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';
import { watchLoopStalls } from '../../lib/loop-stall.ts';

// lib/loop-stall.ts: a backend says when its event loop was held past the bound, and only then.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // holds the event loop, as a long synchronous task would
  }
}

test('a loop held past the bound is logged once, as a warning with how long; a free loop is not', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('debug', {}, (line) => lines.push(JSON.parse(line)));
  const stop = watchLoopStalls(log, { everyMs: 20, reportOverMs: 300 });
  try {
    await sleep(200);
    assert.is(lines.length, 0, 'nothing while the loop runs freely');
    busy(600);
    await sleep(100);
    const held = lines.filter((l) => l.msg === 'event loop held');
    assert.is(held.length, 1);
    assert.is(held[0]!.level, 'warn');
    assert.ok(Number(held[0]!.ms) >= 550, `ms ${held[0]!.ms}`);
  } finally {
    stop();
  }
});

test.run();
