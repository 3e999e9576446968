/**
 * Shared test harness: real etcd, nats-server, backend and agent processes on
 * free loopback ports, plus small helpers. Import from tests as
 * `../harness/index.ts`.
 *
 * uvu pitfall: an error thrown in a `before` hook is swallowed silently by
 * uvu 0.5.6 (no message, exit code 0; the suite's tests just all count as not
 * passed). Suites with before hooks take `test` from ./uvu.ts, which reports
 * the error and fails every test of the suite with it (test/run.ts checks).
 */
export * from './ports.ts';
export * from './tmp.ts';
export * from './proc.ts';
export * from './http.ts';
export * from './etcd.ts';
export * from './nats.ts';
export * from './etcd-cluster.ts';
export * from './nats-cluster.ts';
export * from './backend.ts';
export * from './agent.ts';
export * from './legacy-client.ts';
export * from './slapd.ts';
export * from './haproxy.ts';
export * from './topology.ts';

/**
 * Wraps a callback so that an error it throws is printed to stderr, as it
 * happens, before being rethrown: `test('...', loud(async () => { ... }))`.
 * Not for before hooks: ./uvu.ts reports their errors, so a wrapped hook's
 * error would print twice.
 */
export function loud<A extends unknown[], R>(fn: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      process.stderr.write(`[harness] hook failed: ${(err as Error)?.stack ?? String(err)}\n`);
      throw err;
    }
  };
}
export * from './monitorctl.ts';
export * from './oidc.ts';
