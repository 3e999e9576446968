/**
 * The JavaScript sandbox in this process, no infrastructure: expression evaluations/s with a reused
 * context and with a new sandbox (QuickJS runtime and context) per event (lib/sandbox), then
 * EventFilter applications/s with three expressions each (actors/pipeline/filters.ts, which keeps a
 * sandbox per filter), then the same with a realistic event of ~4 KB (the parse of the input inside
 * QuickJS dominates there).
 * Knobs: BENCH_SANDBOX_EVALS=20000  BENCH_SANDBOX_FRESH=200  BENCH_SANDBOX_FILTERS=5000.
 */
import { Sandbox, sandboxReady } from '../lib/sandbox/index.ts';
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
    evals: num('BENCH_SANDBOX_EVALS', 20000),
    fresh: num('BENCH_SANDBOX_FRESH', 200),
    filters: num('BENCH_SANDBOX_FILTERS', 5000),
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
  await sandboxReady();
  const input = {
    check: { status: 2, executed: 0, labels: { a: 'b' } },
    entity: { metadata: { name: 'e1' } },
    list: [1, 2],
  };
  const sb = new Sandbox();
  const id = sb.define('expression', "event.check.status != 0 && event.entity.metadata.name == 'e1'");
  const reused = rate(cfg.evals, () => sb.run(id, input, { mode: 'bool' }));
  const fresh = rate(cfg.fresh, () => {
    const s = new Sandbox();
    s.run(s.define('expression', 'event.check.status != 0'), input, { mode: 'bool' });
    s.dispose();
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
  const big = bigEvent(event);
  const bigSize = JSON.stringify(big).length;
  const bigFilters = rate(Math.ceil(cfg.filters / 4), () =>
    applyFilter(ref, big, eventExtras(big), now, log),
  );

  return {
    title: 'sandbox: JavaScript expressions in this process',
    lines: [
      table(
        ['what', 'runs', 'per second'],
        [
          ['evaluation, reused context', int(cfg.evals), int(reused)],
          ['evaluation, context per event', int(cfg.fresh), int(fresh)],
          ['filter application (3 expressions)', int(cfg.filters), int(filters)],
          [
            `filter application, ${int(bigSize)}-byte event`,
            int(Math.ceil(cfg.filters / 4)),
            int(bigFilters),
          ],
        ],
      ),
    ],
    summary: [
      `sandbox: ${int(reused)} evaluations/s reused, ${int(fresh)}/s fresh context, ${int(filters)} filter applications/s (${int(bigFilters)}/s with a ${int(bigSize)}-byte event)`,
    ],
  };
}

/** The event with what a real agent's event carries: labels, system facts, output, a full history. */
function bigEvent(e: Event): Event {
  const x = e as unknown as { entity: Record<string, unknown>; check: Record<string, unknown> };
  return {
    ...x,
    entity: {
      ...x.entity,
      metadata: {
        name: 'web-1',
        namespace: 'default',
        labels: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`label_${i}`, `value-${i}`])),
      },
      subscriptions: ['linux', 'web', 'entity:web-1'],
      system: {
        hostname: 'web-1',
        os: 'linux',
        platform: 'debian',
        platform_version: '12.4',
        arch: 'amd64',
        network: {
          interfaces: Array.from({ length: 4 }, (_, i) => ({
            name: `eth${i}`,
            mac: `52:54:00:12:34:5${i}`,
            addresses: [`10.0.${i}.17/24`, `fe80::5054:ff:fe12:345${i}/64`],
          })),
        },
      },
    },
    check: {
      ...x.check,
      command: 'check_disk -w 10% -c 5% -p /',
      output: `DISK CRITICAL - free space: / 1201 MB (4% inode=91%);| /=28340MB;26982;28481;0;29980\n`.repeat(
        20,
      ),
      history: Array.from({ length: 21 }, (_, i) => ({
        status: i % 3 === 0 ? 2 : 0,
        executed: 1000 + i * 60,
      })),
    },
  } as unknown as Event;
}
