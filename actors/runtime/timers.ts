/**
 * The in-memory side of durable timers: a min-heap of deadlines with one Node timer for the
 * earliest. The durable side (the deadline in the actor's record) lives in the actor state; this
 * heap is rebuilt from it when a node takes a shard.
 */

export interface TimerEntry {
  /** Unique per (actor, timer name); a newer entry with the same key replaces the older one. */
  key: string;
  shard: number;
  kind: string;
  id: string;
  name: string;
  /** The deadline as stored in the actor's record; the actor compares it on firing. */
  at: number;
  /** When to fire: `at`, or later after a takeover grace. Never earlier than `at`. */
  fireAt: number;
}

/** Node's timers overflow above 2^31-1 ms; waking every minute also bounds clock-jump effects. */
const MAX_SLEEP_MS = 60_000;

export class TimerHeap {
  private heap: TimerEntry[] = [];
  private live = new Map<string, TimerEntry>();
  private handle: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  constructor(
    private readonly onFire: (e: TimerEntry) => void,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.live.size;
  }

  set(entry: TimerEntry): void {
    this.live.set(entry.key, entry);
    this.push(entry);
    // Replaced deadlines stay in the heap until their time comes; rebuild before they pile up
    // (every keepalive replaces its agent's deadline).
    if (this.heap.length > 2 * this.live.size + 1024) this.compact();
    if (entry.fireAt < this.armedFor) this.schedule();
  }

  delete(key: string): void {
    this.live.delete(key);
  }

  get(key: string): TimerEntry | undefined {
    return this.live.get(key);
  }

  /** Forgets every timer of a shard (the shard moved to another node). */
  dropShard(shard: number): void {
    for (const [k, e] of this.live) if (e.shard === shard) this.live.delete(k);
  }

  clear(): void {
    this.live.clear();
    this.heap = [];
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = Infinity;
  }

  /** Entries due now, removed from the heap, in deadline order. Exposed for tests. */
  takeDue(): TimerEntry[] {
    const due: TimerEntry[] = [];
    const now = this.now();
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (this.live.get(top.key) !== top) {
        this.pop();
        continue;
      }
      if (top.fireAt > now) break;
      this.pop();
      this.live.delete(top.key);
      due.push(top);
    }
    return due;
  }

  private compact(): void {
    this.heap = [];
    for (const e of this.live.values()) this.push(e);
  }

  private schedule(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = Infinity;
    while (this.heap.length > 0 && this.live.get(this.heap[0]!.key) !== this.heap[0]) this.pop();
    const top = this.heap[0];
    if (!top) return;
    const delay = Math.min(Math.max(top.fireAt - this.now(), 0), MAX_SLEEP_MS);
    this.armedFor = top.fireAt;
    this.handle = setTimeout(() => this.tick(), delay);
    this.handle.unref?.();
  }

  private tick(): void {
    this.handle = undefined;
    this.armedFor = Infinity;
    for (const e of this.takeDue()) this.onFire(e);
    this.schedule();
  }

  private push(e: TimerEntry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.fireAt <= h[i]!.fireAt) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private pop(): TimerEntry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.fireAt < h[m]!.fireAt) m = l;
        if (r < h.length && h[r]!.fireAt < h[m]!.fireAt) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}
