import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Logger } from '../../lib/log.ts';

/** How many failed credential checks a user name and an address may have before a block; 0: no limit. */
interface LoginLimitOptions {
  userFailures: number;
  userWindowSec: number;
  addressFailures: number;
  addressWindowSec: number;
}

/** Who is trying: the user name typed (absent when none was, as on a token refresh) and the peer address. */
interface Caller {
  user?: string;
  address?: string;
}

/** A credential check refused before it ran: the caller may try again in `retryAfterSec`. */
export class LoginBlockedError extends Error {
  constructor(readonly retryAfterSec: number) {
    super(`too many failed logins: try again in ${retryAfterSec} seconds`);
    this.name = 'LoginBlockedError';
  }
}

/** One counter: failures of one key within a window; reaching the limit blocks the key for a window. */
class FailureCounter {
  private readonly limiter: RateLimiterMemory;
  constructor(
    readonly kind: 'user' | 'address',
    private readonly failures: number,
    private readonly windowSec: number,
  ) {
    this.limiter = new RateLimiterMemory({ keyPrefix: kind, points: failures, duration: windowSec });
  }

  /** Milliseconds until `key` may try again; 0 when it may now. */
  async blockedMs(key: string | undefined): Promise<number> {
    if (!this.failures || key === undefined) return 0;
    const r = await this.limiter.get(key);
    return r && r.consumedPoints >= this.failures ? r.msBeforeNext : 0;
  }

  /** Counts one failure; true when it was the one that blocked `key`. */
  async fail(key: string | undefined): Promise<boolean> {
    if (!this.failures || key === undefined) return false;
    // Attempts already in flight when the block began fail past the limit; that is no new block.
    const r = await this.limiter.consume(key).catch(() => undefined);
    if (!r || r.consumedPoints < this.failures) return false;
    // The block lasts a whole window from the failure that reached the limit, not what remains of it.
    await this.limiter.block(key, this.windowSec);
    return true;
  }

  async reset(key: string | undefined): Promise<void> {
    if (key !== undefined) await this.limiter.delete(key);
  }
}

/**
 * Failed logins per user name and per peer address (docs/compatibility.md#login-limits), shared by
 * the API's logins and the agent handshake of one node. Only failures count, so thousands of agents
 * reconnecting with good credentials are never slowed; a blocked caller is refused before its
 * password is hashed, so a block is also cheap for the node. The counters live in this node's
 * memory: every node keeps its own.
 */
export class LoginLimits {
  private readonly users: FailureCounter;
  private readonly addresses: FailureCounter;

  constructor(
    opts: LoginLimitOptions,
    private readonly log: Logger,
  ) {
    this.users = new FailureCounter('user', opts.userFailures, opts.userWindowSec);
    this.addresses = new FailureCounter('address', opts.addressFailures, opts.addressWindowSec);
  }

  /** Throws LoginBlockedError while the user name or the address is blocked. */
  async admit(who: Caller): Promise<void> {
    const ms = Math.max(await this.users.blockedMs(who.user), await this.addresses.blockedMs(who.address));
    if (ms > 0) throw new LoginBlockedError(Math.max(1, Math.ceil(ms / 1000)));
  }

  async failed(who: Caller): Promise<void> {
    for (const [counter, key] of [
      [this.users, who.user],
      [this.addresses, who.address],
    ] as const) {
      if (await counter.fail(key))
        this.log.warn('login blocked after repeated failures', { [counter.kind]: key });
    }
  }

  /** A success clears the user name's failures; the address keeps its count (one address, many users). */
  async succeeded(who: Caller): Promise<void> {
    await this.users.reset(who.user);
  }

  /** Runs one credential check under the limits; `undefined` from `check` is a failure. */
  async check<T>(who: Caller, check: () => Promise<T | undefined>): Promise<T | undefined> {
    await this.admit(who);
    const result = await check();
    await (result === undefined ? this.failed(who) : this.succeeded(who));
    return result;
  }
}
