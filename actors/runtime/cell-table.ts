import { actorRecordKey } from '../../proto/names.ts';
import { Cell } from './cell.ts';
import type { ActorBehavior } from './types.ts';

/**
 * The actors in this node's memory, one cell each by record key. A cell leaves the table when its
 * cached view cannot be trusted (a failed turn or write) or its actor went idle; whoever still holds
 * it can tell, and goes to the actor's current cell instead of running on a stale copy.
 */
export class CellTable {
  private readonly cells = new Map<string, Cell>();

  get size(): number {
    return this.cells.size;
  }

  mailboxDepth(): number {
    let d = 0;
    for (const c of this.cells.values()) d += c.mailbox.depth;
    return d;
  }

  /** The actor's cell; a new, unloaded one when it has none here. */
  get(behavior: ActorBehavior<unknown>, id: string, shard: number): Cell {
    const key = actorRecordKey(shard, behavior.keyTokens(id));
    let c = this.cells.get(key);
    if (!c) {
      c = new Cell(behavior, id, shard, key);
      this.cells.set(key, c);
    }
    return c;
  }

  /** A cell no longer in the table: its actor has a fresher cell, or none here any more. */
  evicted(cell: Cell): boolean {
    return this.cells.get(cell.key) !== cell;
  }

  evict(cell: Cell): void {
    if (this.cells.get(cell.key) === cell) this.cells.delete(cell.key);
  }

  ofShard(shard: number): Cell[] {
    return [...this.cells.values()].filter((c) => c.shard === shard);
  }

  /** Forgets the actors of these cells, whichever cell each has by now. */
  forget(cells: Cell[]): void {
    for (const c of cells) this.cells.delete(c.key);
  }

  dropShard(shard: number): void {
    for (const c of [...this.cells.values()]) if (c.shard === shard) this.cells.delete(c.key);
  }

  /** Actors idle for `idleMs` with nothing queued leave memory (their deadlines stay armed). */
  passivate(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const c of [...this.cells.values()])
      if (c.lastUsed < cutoff && c.mailbox.depth === 0) this.cells.delete(c.key);
  }
}
