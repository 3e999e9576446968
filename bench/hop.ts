/**
 * The cost of handing work to another thread of the same process (issue 17, "both cores"), no
 * infrastructure: the main thread sends a request as a worker thread would receive it from the HTTP
 * edge (an event POST: path, credential and a JSON body of up to 725 bytes) and gets a small answer
 * back (`{"stored":true}` and a status), W messages in flight, for BENCH_HOP_SECONDS. Reported: round
 * trips/s, and the busy time per round trip of each thread's event loop (eventLoopUtilization), which
 * is what a split would add to the thread it relieves. Compare with the ~410 µs of main-thread CPU an
 * event POST costs today, about 45 % of it at the edge (docs/performance.md).
 */
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { fix, int, table } from './lib/format.ts';
import type { BenchResult } from './lib/result.ts';

export interface HopConfig {
  seconds: number;
  inFlight: number[];
}
export const hopConfig = (): HopConfig => ({
  seconds: Number(process.env.BENCH_HOP_SECONDS ?? 3),
  inFlight: (process.env.BENCH_HOP_IN_FLIGHT ?? '1,64').split(',').map(Number),
});

// The worker answers every message at once: what is measured is the hop, not work.
const WORKER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => parentPort.postMessage({ id: m.id, status: 201, body: '{"stored":true}' }));
`;

const body = JSON.stringify({
  check: {
    metadata: { name: 'http-health' },
    status: 0,
    output:
      'HTTP OK: HTTP/1.1 200 OK - 512 bytes in 0.004 second response time |time=0.004s;;;0.000000 size=512B;;;0'.repeat(
        4,
      ),
    interval: 60,
    handlers: ['slack'],
  },
  entity: { metadata: { name: 'web-017', labels: { region: 'eu' } }, entity_class: 'proxy' },
}).slice(0, 725);

async function window(inFlight: number, seconds: number) {
  const worker = new Worker(WORKER, { eval: true });
  await new Promise((r) => worker.once('online', r));
  let done = 0;
  let next = 0;
  let stop = false;
  const send = () => {
    worker.postMessage({
      id: next++,
      method: 'POST',
      path: '/api/core/v2/namespaces/default/events/web-017/http-health',
      credential: 'Key 0b8f0a6e-2c7d-4e8a-9f1b-3c5d7e9f1a2b',
      body,
    });
  };
  const finished = new Promise<void>((resolve) => {
    worker.on('message', () => {
      done++;
      if (!stop) send();
      else if (done === next) resolve();
    });
  });
  const elu0 = performance.eventLoopUtilization();
  const welu0 = worker.performance.eventLoopUtilization();
  const t0 = performance.now();
  for (let i = 0; i < inFlight; i++) send();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  stop = true;
  await finished;
  const ms = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const welu = worker.performance.eventLoopUtilization(welu0);
  await worker.terminate();
  return {
    rate: (done / ms) * 1000,
    mainUs: (elu.active * 1000) / done,
    workerUs: (welu.active * 1000) / done,
  };
}

export async function runHop(cfg: HopConfig): Promise<BenchResult> {
  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  for (const w of cfg.inFlight) {
    const f = await window(w, cfg.seconds);
    rows.push([String(w), int(f.rate), fix(f.mainUs, 1), fix(f.workerUs, 1)]);
    figures[`hop_main_us_${w}`] = f.mainUs;
  }
  return {
    title: 'hop: a request handed to a worker thread and answered',
    lines: [
      `postMessage of an event POST (path, credential, ${body.length}-byte body) and of its answer, closed loop, ${cfg.seconds} s per row;`,
      'busy µs per round trip = event-loop active time / round trips, of the main thread and of the worker',
      '',
      table(['in flight', 'round trips/s', 'main busy µs', 'worker busy µs'], rows),
    ],
    summary: [
      `hop: worker-thread round trip, main thread busy ${rows.map((r) => `${r[2]} µs (${r[0]} in flight)`).join(', ')}`,
    ],
    figures,
  };
}
