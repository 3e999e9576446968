// Refuses check requests the reference refuses (docs/compatibility.md#check-request-dedupe): a request
// already seen (the agent may match several subscriptions of the check), an older one than the last, and a
// check (per proxy entity) whose previous run has not finished.

type Admission =
  { ok: true; key: string } | { ok: false; reason: 'in_progress' | 'duplicate' | 'stale'; message: string };

export class CheckIntake {
  private readonly lastIssued = new Map<string, number>();
  private readonly running = new Set<string>();

  static key(check: string, proxyEntity?: string): string {
    return proxyEntity ? `${check}\u0000${proxyEntity}` : check;
  }

  /** Admits and marks the check running; the caller must call `done(key)` when it finished. */
  admit(check: string, proxyEntity: string | undefined, issued: number): Admission {
    const key = CheckIntake.key(check, proxyEntity);
    if (this.running.has(key))
      return { ok: false, reason: 'in_progress', message: 'check execution still in progress' };
    const last = this.lastIssued.get(key);
    if (last !== undefined && issued === last)
      return {
        ok: false,
        reason: 'duplicate',
        message: 'duplicate check request (the agent may match several subscriptions of the check)',
      };
    if (last !== undefined && issued < last)
      return { ok: false, reason: 'stale', message: 'check request is older than one already received' };
    this.lastIssued.set(key, issued);
    this.running.add(key);
    return { ok: true, key };
  }

  done(key: string): void {
    this.running.delete(key);
  }

  get inProgress(): number {
    return this.running.size;
  }
}
