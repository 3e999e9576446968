// Token bucket shared by every asset fetch of the agent (`assets-rate-limit` per second,
// `assets-burst-limit` tokens at most). Waiters are served in arrival order.

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly queue: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Resolves when a token has been taken for the caller. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.drain();
    });
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.rate);
    this.last = t;
  }

  private drain(): void {
    this.refill();
    while (this.queue.length > 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.queue.shift()!();
    }
    if (this.queue.length > 0 && !this.timer) {
      const wait = Math.max(1, Math.ceil(((1 - this.tokens) / this.rate) * 1000));
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.drain();
      }, wait);
      this.timer.unref?.(); // a pending fetch must not keep a stopping agent alive
    }
  }
}
