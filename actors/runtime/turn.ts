import type { Logger } from '../../lib/log.ts';
import { sideKey, type Cell } from './cell.ts';
import type { TimerSpec, Turn } from './types.ts';

/**
 * One turn of an actor. It works on the cell's state in place (no copy per message): a turn that
 * throws, or whose commit fails, has its cell evicted and reloaded from the store, which holds the
 * last committed state.
 */
export class TurnImpl implements Turn<unknown> {
  readonly kind: string;
  readonly id: string;
  readonly shard: number;
  readonly now = Date.now();
  state: unknown;
  /** The cell's timers until the turn changes one; then its own copy. */
  timers: Record<string, TimerSpec>;
  readonly sideWrites = new Map<string, { value?: unknown; json?: string }>();
  timersChanged = false;
  readonly effects: Array<() => void | Promise<void>> = [];
  readonly queued: Array<{ subject: string; data: string; msgId: string }> = [];
  /** Set by the turn runner before each message of the turn is applied. */
  messageId: string | undefined;
  /** Which messages of the turn wrote each side record (their ids travel with the write). */
  readonly writers = new Map<string, string[]>();

  constructor(
    private readonly cell: Cell,
    private readonly readSide: (
      cell: Cell,
      bucket: string,
      key: string,
      messageId: string | undefined,
    ) => unknown,
    readonly log: Logger,
  ) {
    this.kind = cell.behavior.kind;
    this.id = cell.id;
    this.shard = cell.shard;
    this.state = cell.state;
    this.timers = cell.timers;
  }

  private ownTimers(): Record<string, TimerSpec> {
    if (!this.timersChanged) {
      this.timers = { ...this.timers };
      this.timersChanged = true;
    }
    return this.timers;
  }

  setTimer(name: string, at: number, graceMs?: number): void {
    this.ownTimers()[name] = graceMs ? { at, grace: graceMs } : { at };
  }
  clearTimer(name: string): void {
    if (name in this.timers) delete this.ownTimers()[name];
  }
  timer(name: string): TimerSpec | undefined {
    return this.timers[name];
  }

  async read<T>(bucket: string, key: string): Promise<T | undefined> {
    // The committed copy is read even when the turn staged a newer one: reading it is what
    // recognises a message that already wrote this record (AlreadyApplied).
    const committed = await this.readSide(this.cell, bucket, key, this.messageId);
    const staged = this.sideWrites.get(sideKey(bucket, key));
    if (staged)
      return (
        staged.value === undefined && staged.json !== undefined ? JSON.parse(staged.json) : staged.value
      ) as T | undefined;
    return committed as T | undefined;
  }
  write(bucket: string, key: string, value: unknown): void {
    this.stage(sideKey(bucket, key), { value });
  }
  writeJson(bucket: string, key: string, json: string, value?: unknown): void {
    this.stage(sideKey(bucket, key), value === undefined ? { json } : { json, value });
  }
  remove(bucket: string, key: string): void {
    this.stage(sideKey(bucket, key), { value: undefined });
  }

  private stage(sk: string, w: { value?: unknown; json?: string }): void {
    this.sideWrites.set(sk, w);
    const id = this.messageId;
    if (id === undefined) return;
    const ids = this.writers.get(sk);
    if (!ids) this.writers.set(sk, [id]);
    else if (!ids.includes(id)) ids.push(id);
  }

  /** The side write's text, or undefined for a removal. */
  static textOf(w: { value?: unknown; json?: string }): string | undefined {
    return w.json ?? (w.value === undefined ? undefined : JSON.stringify(w.value));
  }
  afterCommit(fn: () => void | Promise<void>): void {
    this.effects.push(fn);
  }
  enqueue(subject: string, data: string, msgId: string): void {
    this.queued.push({ subject, data, msgId });
  }
}
