/**
 * A turn-based mailbox: posted jobs run one at a time, in order, each to completion (across its
 * awaits) before the next starts. Different mailboxes run concurrently.
 */
export class Mailbox {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;

  get depth(): number {
    return this.pending;
  }

  post<T>(job: () => Promise<T>): Promise<T> {
    this.pending++;
    const run = this.tail.then(job);
    this.tail = run.then(
      () => {
        this.pending--;
      },
      () => {
        this.pending--;
      },
    );
    return run;
  }

  /** Resolves once every job posted so far has finished. */
  idle(): Promise<void> {
    return this.tail;
  }
}
