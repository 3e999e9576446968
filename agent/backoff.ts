// Reconnection delays. Jitter matters more than the curve: after a backend dies, every agent it held
// reconnects at once, and spreading them keeps the surviving nodes from a synchronized stampede.

export interface BackoffOptions {
  /** First delay, before jitter. Any unit; `next()` answers in the same one (the agent uses seconds). */
  min: number;
  /** Ceiling of every delay, jitter included. */
  max: number;
  multiplier: number;
  /** Uniform in [0, 1); injected so tests can pin the jitter. */
  random?: () => number;
}

export class Backoff {
  private wait: number;
  private readonly random: () => number;

  constructor(private readonly opts: BackoffOptions) {
    if (!(opts.min > 0) || !(opts.max >= opts.min) || !(opts.multiplier >= 1)) {
      throw new RangeError(
        `invalid backoff: min ${opts.min}, max ${opts.max}, multiplier ${opts.multiplier}`,
      );
    }
    this.wait = opts.min;
    this.random = opts.random ?? Math.random;
  }

  /** Delay before the next attempt: the current wait plus up to 100% jitter, capped at max. */
  next(): number {
    const base = this.wait;
    // Growth stops at the cap so a long outage cannot overflow the wait to Infinity.
    this.wait = Math.min(this.wait * this.opts.multiplier, this.opts.max);
    return Math.min(base + base * this.random(), this.opts.max);
  }

  /** After a successful connection the next failure starts from `min` again. */
  reset(): void {
    this.wait = this.opts.min;
  }
}
