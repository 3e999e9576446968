/**
 * uvu's `test`, with `before` hooks that cannot fail silently. Suites that register a `before` or
 * `before.each` hook import `test` from here instead of from 'uvu' (test/run.ts fails a suite that
 * registers one without it).
 *
 * Why: uvu 0.5.6 runs the `before` hooks inside a try whose `finally` returns, so an error thrown in
 * one is swallowed: nothing is printed, the tests do not run, and the process exits 0 (see the header
 * of test/run.ts). Here each `before` hook is wrapped: its error is printed to stderr with the hook's
 * suite, the process exit code is set to 1, and every test of the suite then fails with that error
 * (a `before.each` hook registered first rethrows it), so uvu reports each one as a failure naming
 * the hook. The later `before` hooks of that suite do not run; the `after` hooks still do. An error
 * of a `before.each` hook is rethrown naming the hook, so the test it ran for fails with it.
 *
 * This patches uvu's default `test` object in place (its `before` and `run` properties): uvu keeps
 * one such object per process, and importing this module is what guards it.
 */
import path from 'node:path';
import { test as uvuTest, type Callback, type Test } from 'uvu';

interface Round {
  failure?: Error;
  armed: boolean;
}

let anyFailed = false;
process.on('exit', () => {
  if (anyFailed) process.exitCode = 1;
});

function hookError(hook: string, suite: string, err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  const e = new Error(`${hook} hook of ${suite} failed: ${message}`, { cause: err });
  if (err instanceof Error && err.stack) {
    const frames = err.stack.split('\n').filter((l) => /^\s+at /.test(l));
    e.stack = [`${e.name}: ${e.message}`, ...frames].join('\n');
  }
  return e;
}

function guardHooks<T>(t: Test<T>, suite: string): Test<T> {
  const before = t.before;
  const beforeEach = t.before.each;
  const run = t.run;
  // uvu starts a fresh set of hooks and tests at each run(): so does the guard.
  let round: Round = { armed: false };
  const arm = (r: Round) => {
    if (r.armed) return;
    r.armed = true;
    beforeEach(() => {
      if (r.failure) throw r.failure;
    });
  };
  const guarded = ((fn: Callback<T>) => {
    const r = round;
    arm(r);
    before(async (ctx) => {
      if (r.failure) return;
      try {
        await fn(ctx);
      } catch (err) {
        r.failure = hookError('before', suite, err);
        anyFailed = true;
        process.exitCode = 1;
        process.stderr.write(
          `[harness] before hook of ${suite} failed, so every test of it fails: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
      }
    });
  }) as Test<T>['before'];
  guarded.each = (fn: Callback<T>) => {
    const r = round;
    arm(r);
    beforeEach(async (ctx) => {
      try {
        await fn(ctx);
      } catch (err) {
        throw hookError('before.each', suite, err);
      }
    });
  };
  t.before = guarded;
  t.run = () => {
    run();
    round = { armed: false };
  };
  return t;
}

const file = process.argv[1] ? path.relative(process.cwd(), process.argv[1]) : 'the suite';

export const test = guardHooks(uvuTest, file);
