// Preloaded into a backend under test with NODE_OPTIONS="--import <this file>" (plain JS so it
// needs no loader). Nothing else in the process changes.
//  - Every 5 s it prints one JSON line on stderr: {"bench_loop":{...}} with the event-loop delay
//    of the last 5 s and the process's memory.
//  - On SIGUSR2 it runs the command written in the file named by BENCH_CTL_FILE (default "gc"):
//      gc               force a full GC, then print the memory line at once (with after_gc: true)
//      prof-start       start the V8 CPU profiler (inspector, 500 us sampling)
//      prof-stop <file> stop it, write the .cpuprofile to <file>, print {"bench_prof":"<file>"}
//      heap <file>      write a heap snapshot to <file>, print {"bench_heap":"<file>"}
//  - With BENCH_PROF_AT_START=1 the CPU profiler starts as this file loads, before the process's
//    own code, so a later prof-stop covers its start-up (node refuses --cpu-prof in NODE_OPTIONS);
//    a process that exits with the profiler still running writes it to BENCH_PROF_EXIT_FILE.
import fs from 'node:fs';
import inspector from 'node:inspector';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
let gcMax = 0,
  gcTotal = 0,
  gcCount = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcCount++;
    gcTotal += e.duration;
    if (e.duration > gcMax) gcMax = e.duration;
  }
}).observe({ entryTypes: ['gc'] });
const emit = (o) => process.stderr.write(JSON.stringify(o) + '\n');
const report = (extra) => {
  const m = process.memoryUsage();
  emit({
    bench_loop: {
      p50_ms: h.percentile(50) / 1e6,
      p99_ms: h.percentile(99) / 1e6,
      max_ms: h.max / 1e6,
      rss_mb: m.rss / 2 ** 20,
      heap_used_mb: m.heapUsed / 2 ** 20,
      heap_total_mb: m.heapTotal / 2 ** 20,
      external_mb: m.external / 2 ** 20,
      array_buffers_mb: m.arrayBuffers / 2 ** 20,
      gc_count: gcCount,
      gc_total_ms: gcTotal,
      gc_max_ms: gcMax,
      at: Date.now(),
      ...extra,
    },
  });
  h.reset();
  gcMax = 0;
  gcTotal = 0;
  gcCount = 0;
};
setInterval(() => report({}), 5000).unref();

let gc;
let session;
const startProfiler = (then) => {
  session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable', () =>
    session.post('Profiler.setSamplingInterval', { interval: 500 }, () =>
      session.post('Profiler.start', then),
    ),
  );
};
if (process.env.BENCH_PROF_AT_START === '1') {
  startProfiler(() => {});
  // A start that fails exits before anyone asks for the profile: it goes to BENCH_PROF_EXIT_FILE
  // then (the main thread's inspector answers synchronously, so this works in an exit handler).
  process.on('exit', () => {
    const file = process.env.BENCH_PROF_EXIT_FILE;
    if (!session || !file) return;
    session.post('Profiler.stop', (err, res) => {
      if (!err) fs.writeFileSync(file, JSON.stringify(res.profile));
    });
  });
}
process.on('SIGUSR2', () => {
  let cmd = 'gc';
  try {
    if (process.env.BENCH_CTL_FILE) cmd = fs.readFileSync(process.env.BENCH_CTL_FILE, 'utf8').trim() || 'gc';
  } catch {
    /* default */
  }
  const [verb, arg] = cmd.split(/\s+/, 2);
  if (verb === 'gc') {
    if (!gc) {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc');
    }
    gc();
    gc();
    report({ after_gc: true });
  } else if (verb === 'prof-start') {
    startProfiler(() => emit({ bench_prof: 'started' }));
  } else if (verb === 'heap') {
    v8.writeHeapSnapshot(arg);
    emit({ bench_heap: arg });
  } else if (verb === 'prof-stop' && session) {
    session.post('Profiler.stop', (err, res) => {
      if (!err) fs.writeFileSync(arg, JSON.stringify(res.profile));
      session.disconnect();
      session = undefined;
      emit({ bench_prof: err ? `error: ${err.message}` : arg });
    });
  }
});
