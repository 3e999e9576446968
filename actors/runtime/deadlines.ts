import type { Cell } from './cell.ts';
import { TimerHeap, type TimerEntry } from './timers.ts';
import type { TimerSpec } from './types.ts';

/**
 * The deadlines of the actors whose shards this node owns, armed in one heap from what their
 * records hold (docs/architecture.md#durable-timers): at takeover, after each commit, and when an
 * actor is loaded.
 */
export class Deadlines {
  private readonly heap: TimerHeap;

  constructor(onFire: (e: TimerEntry) => void) {
    this.heap = new TimerHeap(onFire);
  }

  get size(): number {
    return this.heap.size;
  }

  /**
   * With `takeoverAt` (the shard was just taken), a deadline with a grace fires no earlier than that
   * grace after the takeover (docs/architecture.md#durable-timers).
   */
  arm(cell: Cell, name: string, spec: TimerSpec, takeoverAt?: number): void {
    const fireAt =
      takeoverAt !== undefined && spec.grace ? Math.max(spec.at, takeoverAt + spec.grace) : spec.at;
    this.heap.set({
      key: timerKey(cell, name),
      shard: cell.shard,
      kind: cell.behavior.kind,
      id: cell.id,
      name,
      at: spec.at,
      fireAt,
    });
  }

  /** Follows a committed turn's change of the actor's deadlines. */
  sync(cell: Cell, before: Record<string, TimerSpec>, after: Record<string, TimerSpec>): void {
    for (const name of Object.keys(before)) if (!(name in after)) this.heap.delete(timerKey(cell, name));
    for (const [name, spec] of Object.entries(after)) {
      if (before[name]?.at !== spec.at) this.arm(cell, name, spec);
    }
  }

  /**
   * Arms the loaded record's deadlines the heap does not know: those of a turn that was decided (its
   * record written) but failed before this node adopted it. Deadlines already armed are kept, with
   * any takeover grace they had.
   */
  armMissing(cell: Cell): void {
    for (const [name, spec] of Object.entries(cell.timers)) {
      if (this.heap.get(timerKey(cell, name))?.at !== spec.at) this.arm(cell, name, spec);
    }
  }

  dropShard(shard: number): void {
    this.heap.dropShard(shard);
  }

  clear(): void {
    this.heap.clear();
  }
}

const timerKey = (cell: Cell, name: string) => `${cell.key}\u0000${name}`;
