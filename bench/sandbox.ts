/**
 * The JavaScript sandbox in this process, no infrastructure: expression evaluations/s with a reused
 * context and with a context per event (lib/js-sandbox.ts), then EventFilter applications/s with
 * three expressions each (actors/pipeline/filters.ts, which keeps a context per filter).
 * Knobs: BENCH_SANDBOX_EVALS=5000  BENCH_SANDBOX_FRESH=200  BENCH_SANDBOX_FILTERS=2000.
 */
import { JsSandbox } from '../lib/js-sandbox.ts';
import { createLogger } from '../lib/log.ts';
import type { Event } from '../proto/schemas/event.ts';
import { applyFilter } from '../actors/pipeline/filters.ts';
import { eventExtras } from '../actors/pipeline/synthesize.ts';
import type { EventFilterSpec, FilterRef } from '../actors/pipeline/types.ts';
import { int, note, table } from './lib/format.ts';
import type { BenchResult } from './lib/result.ts';

export interface SandboxConfig {
  evals: number;
  fresh: number;
  filters: number;
}

export function sandboxConfig(): SandboxConfig {
  const num = (name: string, dflt: number) => {
    const v = Number(process.env[name] ?? dflt);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
    return v;
  };
  return {
    evals: num('BENCH_SANDBOX_EVALS', 5000),
    fresh: num('BENCH_SANDBOX_FRESH', 200),
    filters: num('BENCH_SANDBOX_FILTERS', 2000),
  };
}

/** Runs `n` times; the rate per second. */
function rate(n: number, once: () => void): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) once();
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

export async function runSandbox(cfg: SandboxConfig): Promise<BenchResult> {
  note('sandbox: expression evaluations and filter applications');
  const input = {
    check: { status: 2, executed: 0, labels: { a: 'b' } },
    entity: { metadata: { name: 'e1' } },
    list: [1, 2],
  };
  const sb = new JsSandbox();
  const id = sb.define('expression', "event.check.status != 0 && event.entity.metadata.name == 'e1'");
  const reused = rate(cfg.evals, () => sb.run(id, input, { mode: 'bool' }));
  const fresh = rate(cfg.fresh, () => {
    const s = new JsSandbox();
    s.run(s.define('expression', 'event.check.status != 0'), input, { mode: 'bool' });
  });

  const log = createLogger('warn', {}, () => {});
  const ref: FilterRef = {
    kind: 'resource',
    filter: {
      metadata: { name: 'bench', namespace: 'default' },
      action: 'allow',
      expressions: ['event.check.status != 0', 'event.check.occurrences >= 1', 'event.is_incident'],
    } as EventFilterSpec,
  };
  const event = {
    entity: {
      metadata: { name: 'web-1', namespace: 'default' },
      entity_class: 'agent',
      system: { hostname: 'web-1' },
    },
    check: {
      metadata: { name: 'disk' },
      status: 2,
      occurrences: 2,
      history: [
        { status: 0, executed: 1000 },
        { status: 2, executed: 1001 },
      ],
    },
  } as unknown as Event;
  const now = new Date();
  const filters = rate(cfg.filters, () => applyFilter(ref, event, eventExtras(event), now, log));

  return {
    title: 'sandbox: JavaScript expressions in this process',
    lines: [
      table(
        ['what', 'runs', 'per second'],
        [
          ['evaluation, reused context', int(cfg.evals), int(reused)],
          ['evaluation, context per event', int(cfg.fresh), int(fresh)],
          ['filter application (3 expressions)', int(cfg.filters), int(filters)],
        ],
      ),
    ],
    summary: [
      `sandbox: ${int(reused)} evaluations/s reused, ${int(fresh)}/s fresh context, ${int(filters)} filter applications/s`,
    ],
  };
}
