/**
 * Runs the work of what arrives in bursts (NATS deliveries, agent frames) in short slices, yielding
 * to the event loop between them (docs/architecture.md#work-in-slices).
 *
 * The NATS client hands over everything one socket read held, and libuv reads up to 32 chunks of
 * 64 KiB per turn of the loop, so a backlog used to be handled in one synchronous burst of hundreds
 * of milliseconds; agents reconnecting together each resend what they hold. Node accepts one new
 * connection per turn of the loop: during such bursts reconnecting agents were accepted a few per
 * second, and some waited out their handshake timeout. Queued here, the work runs at most `sliceMs`
 * at a time, and the loop polls its sockets between slices. Order is kept: one FIFO for the process.
 */
const DEFAULTS = {
  /** Longest stretch of deliveries before the loop gets a turn. */
  sliceMs: 20,
  /** Consumed entries are dropped from the front of the queue once this many have piled up. */
  compactAfter: 4096,
} as const;

export class Slices {
  private queue: Array<(() => void) | undefined> = [];
  private head = 0;
  private draining = false;

  constructor(private readonly sliceMs: number = DEFAULTS.sliceMs) {}

  /** Deliveries waiting for their slice. */
  get depth(): number {
    return this.queue.length - this.head;
  }

  run(work: () => void): void {
    this.queue.push(work);
    if (this.draining) return;
    this.draining = true;
    setImmediate(this.drain);
  }

  private readonly drain = (): void => {
    const until = performance.now() + this.sliceMs;
    while (this.head < this.queue.length) {
      const work = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      try {
        work();
      } catch (err) {
        // Thrown where it would have been before the queue: an uncaught exception, not a lost one.
        queueMicrotask(() => {
          throw err;
        });
      }
      // No microtask checkpoint between deliveries: the NATS client flushes its outbound buffer at
      // each one, and a write per delivery cost more than the work. What the deliveries resolved
      // runs right after the slice, before the loop polls.
      if (performance.now() >= until) break;
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
      this.draining = false;
      return;
    }
    if (this.head >= DEFAULTS.compactAfter) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    setImmediate(this.drain);
  };
}

/** The process's one queue: NATS deliveries and agent frames share it, so neither starves the other. */
export const workSlices = new Slices();
