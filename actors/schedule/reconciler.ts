import { configKeys } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { ConfigStore } from '../config/store.ts';
import type { ActorClient } from '../runtime/ask.ts';
import { SCHEDULE_KIND, scheduleId, type StoredCheck } from './messages.ts';

const CONCURRENCY = 16;
const RETRY_MS = 5000;
const DEBOUNCE_MS = 50;

/**
 * Runs on every node: follows the check configs in the node's configuration cache and tells each
 * check's schedule actor about changes (`configure`) and deletions (`stop`). At start it sends
 * `ensure` for every check, so each has an armed schedule whatever happened while no node ran;
 * the actor ignores versions it already holds, so this costs one small turn per check (a few
 * thousand checks: a few seconds of messages at most, 16 at a time), and messages from several
 * nodes about one change are idempotent.
 */
export class ScheduleReconciler {
  /** Check key -> the mod revision its actor has acknowledged from this node. */
  private readonly known = new Map<string, number>();
  private started = false;
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly config: ConfigStore,
    private readonly actors: ActorClient,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.config.onChange(() => this.kick(DEBOUNCE_MS));
    this.kick(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private kick(delay: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pass();
    }, delay);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    let failed = 0;
    let lastError = '';
    try {
      const type = this.started ? 'configure' : 'ensure';
      const prefix = configKeys.prefix('checks');
      const jobs: Array<() => Promise<void>> = [];
      const present = new Set<string>();
      for (const e of this.config.entries<StoredCheck>(prefix)) {
        present.add(e.key);
        if (this.known.get(e.key) === e.modRevision) continue;
        const [ns, name] = e.key.slice(prefix.length).split('/') as [string, string];
        jobs.push(async () => {
          await this.actors.ask(
            SCHEDULE_KIND,
            scheduleId(ns, name),
            type,
            { config: e.value, revision: e.modRevision },
            { deadlineMs: 30_000 },
          );
          this.known.set(e.key, e.modRevision);
        });
      }
      for (const [key, revision] of this.known) {
        if (present.has(key)) continue;
        const [ns, name] = key.slice(prefix.length).split('/') as [string, string];
        jobs.push(async () => {
          await this.actors.ask(
            SCHEDULE_KIND,
            scheduleId(ns, name),
            'stop',
            { revision },
            { deadlineMs: 30_000 },
          );
          if (this.known.get(key) === revision) this.known.delete(key);
        });
      }
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, async () => {
          while (next < jobs.length && !this.stopped) {
            const job = jobs[next++]!;
            await job().catch((err) => {
              failed++;
              lastError = (err as Error).message;
            });
          }
        }),
      );
      // One line per pass, not one per check: at start thousands may wait for their shards.
      if (failed) this.log.warn('schedule updates not delivered; will retry', { failed, error: lastError });
      else {
        if (!this.started && jobs.length) this.log.info('schedules ensured', { checks: present.size });
        this.started = true;
      }
    } finally {
      this.running = false;
    }
    if (this.again) {
      this.again = false;
      this.kick(0);
    } else if (failed) this.kick(RETRY_MS);
  }
}
