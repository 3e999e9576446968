import { parseCron, type CronSchedule } from '../../proto/cron.ts';
import { nextCronFire } from '../../lib/cron.ts';
import type { Logger } from '../../lib/log.ts';
import type { LocalCheck } from './checks/definition.ts';
import { legacySplay } from './checks/splay.ts';
import { legacySubdued } from './checks/subdue.ts';

// A legacy client's standalone checks (docs/compatibility.md#legacy-client): the checks of its own definition
// with `standalone: true` run on the client's clock, not on a backend request. An interval check first runs
// after the legacy splay of `<client>:<check>`, then every interval; a cron check at each cron time. A
// fire is handed to the executor as a request issued at the fire time, so it runs (tokens, hooks, dedupe)
// and is sent like any other; a fire inside a `subdue` window is skipped.

interface StandaloneDeps {
  clientName: string;
  checks: Record<string, LocalCheck>;
  /** The executor's entry point (CheckExecutor.handle): a decoded check request. */
  request: (value: unknown) => void;
  log: Logger;
  /** Epoch ms; tests may pin it. */
  now?: () => number;
}

type Schedule = { kind: 'interval'; seconds: number } | { kind: 'cron'; cron: CronSchedule };

/** The schedule of a local check when it is standalone, else undefined. */
export function standaloneSchedule(check: LocalCheck): Schedule | undefined {
  if (check.standalone !== true || check.publish === false) return undefined;
  if (typeof check.cron === 'string') return { kind: 'cron', cron: parseCron(check.cron) };
  if (typeof check.interval === 'number' && Number.isInteger(check.interval) && check.interval > 0)
    return { kind: 'interval', seconds: check.interval };
  return undefined;
}

// setTimeout takes at most 2^31-1 ms; a longer wait is taken in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

export class StandaloneChecks {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private running = false;

  constructor(private readonly deps: StandaloneDeps) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    const now = this.now();
    for (const [name, check] of Object.entries(this.deps.checks)) {
      let schedule: Schedule | undefined;
      try {
        schedule = standaloneSchedule(check);
      } catch (e) {
        this.deps.log.warn('standalone check not scheduled: invalid cron', {
          check: name,
          error: (e as Error).message,
        });
        continue;
      }
      if (!schedule) continue;
      if (schedule.kind === 'interval') {
        const splay = legacySplay(`${this.deps.clientName}:${name}`, schedule.seconds, now);
        this.deps.log.debug('scheduling standalone check', {
          check: name,
          splay,
          interval: schedule.seconds,
        });
        this.at(name, now + splay * 1000, (fired) => fired + schedule.seconds * 1000, check);
      } else {
        const cron = schedule.cron;
        const next = nextCronFire(cron, now);
        if (next === undefined) {
          this.deps.log.warn('standalone check not scheduled: its cron never fires', { check: name });
          continue;
        }
        this.deps.log.debug('scheduling standalone check', { check: name, cron: check.cron });
        this.at(name, next, (fired) => nextCronFire(cron, fired), check);
      }
    }
  }

  stop(): void {
    this.running = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** Fires the check at `whenMs`, then at `next(whenMs)` and so on: on the clock, never drifting with the run. */
  private at(name: string, whenMs: number, next: (firedMs: number) => number | undefined, check: LocalCheck) {
    if (!this.running) return;
    const wait = Math.max(0, whenMs - this.now());
    this.timers.set(
      name,
      setTimeout(
        () => {
          if (!this.running) return;
          if (this.now() + 1 < whenMs) return this.at(name, whenMs, next, check);
          this.fire(name, check, whenMs);
          // A clock jump or a slow event loop must not make it catch up with a burst: the next time after now.
          let after = next(whenMs);
          while (after !== undefined && after <= this.now()) after = next(after);
          if (after !== undefined) this.at(name, after, next, check);
        },
        Math.min(wait, MAX_TIMER_MS),
      ),
    );
  }

  private fire(name: string, check: LocalCheck, whenMs: number): void {
    if (typeof check.command !== 'string' || !check.command) {
      this.deps.log.warn('standalone check has no command; legacy extensions are not supported', {
        check: name,
      });
      return;
    }
    if (legacySubdued(check.subdue, new Date(whenMs))) {
      this.deps.log.info('check execution was subdued', { check: name });
      return;
    }
    // The executor merges the local definition over this request, as over a backend's.
    this.deps.request({
      config: { metadata: { name }, command: check.command },
      issued: Math.floor(whenMs / 1000),
    });
  }
}
