import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { KvStore } from '../../actors/runtime/kv-store.ts';
import type { Logger } from '../../lib/log.ts';
import { RateLimiterNatsKv, SharedCounts } from './login-store.ts';

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
  private readonly limiter: RateLimiterNatsKv;
  /** This node's own count, used while the shared one cannot be (the limiter's insurance). */
  private readonly memory: RateLimiterMemory;
  constructor(
    readonly kind: 'user' | 'address',
    private readonly failures: number,
    private readonly windowSec: number,
    shared: SharedCounts,
  ) {
    const limits = { keyPrefix: kind, points: failures, duration: windowSec };
    this.memory = new RateLimiterMemory(limits);
    this.limiter = new RateLimiterNatsKv({ ...limits, insuranceLimiter: this.memory }, shared);
  }

  /** Milliseconds until `key` may try again (0 when it may now), and whether it has failures counted. */
  async blockedMs(key: string | undefined): Promise<{ ms: number; counted: boolean }> {
    if (!this.failures || key === undefined) return { ms: 0, counted: false };
    // A block made in memory while NATS was away still holds after it is back.
    const counts = await Promise.all([this.limiter.get(key), this.memory.get(key)]);
    return {
      ms: Math.max(0, ...counts.map((r) => (r && r.consumedPoints >= this.failures ? r.msBeforeNext : 0))),
      counted: counts.some((r) => !!r && r.consumedPoints > 0),
    };
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
    if (key !== undefined) await Promise.all([this.limiter.delete(key), this.memory.delete(key)]);
  }
}

/** Where the counts of every node meet: the login bucket, and whether NATS is connected now. */
interface SharedStore {
  kv: Pick<KvStore, 'getLatest' | 'put' | 'remove'>;
  connected(): boolean;
}

/**
 * Failed logins per user name and per peer address (docs/compatibility.md#login-limits), shared by
 * the API's logins and the agent handshake of every node through a KV bucket, so a load balancer
 * spreading an attacker's guesses over N nodes does not give N times the budget. Only failures
 * count (a good login reads, and writes only to clear its user's earlier failures), so thousands of
 * agents reconnecting with good credentials are never slowed; a blocked caller is refused before its
 * password is hashed, so a block is also cheap for the node. While NATS cannot be used each node
 * counts in its own memory, as it did before the counts were shared.
 */
export class LoginLimits {
  private readonly users: FailureCounter;
  private readonly addresses: FailureCounter;

  constructor(
    opts: LoginLimitOptions,
    private readonly log: Logger,
    store: SharedStore,
  ) {
    const shared = new SharedCounts(store.kv, store.connected, log);
    this.users = new FailureCounter('user', opts.userFailures, opts.userWindowSec, shared);
    this.addresses = new FailureCounter('address', opts.addressFailures, opts.addressWindowSec, shared);
  }

  /**
   * Throws LoginBlockedError while the user name or the address is blocked; answers whether the user
   * name has failures counted (a success then clears them).
   */
  async admit(who: Caller): Promise<boolean> {
    const [user, address] = await Promise.all([
      this.users.blockedMs(who.user),
      this.addresses.blockedMs(who.address),
    ]);
    const ms = Math.max(user.ms, address.ms);
    if (ms > 0) throw new LoginBlockedError(Math.max(1, Math.ceil(ms / 1000)));
    return user.counted;
  }

  async failed(who: Caller): Promise<void> {
    const counted = [
      [this.users, who.user],
      [this.addresses, who.address],
    ] as const;
    await Promise.all(
      counted.map(async ([counter, key]) => {
        if (await counter.fail(key))
          this.log.warn('login blocked after repeated failures', { [counter.kind]: key });
      }),
    );
  }

  /** A success clears the user name's failures; the address keeps its count (one address, many users). */
  async succeeded(who: Caller): Promise<void> {
    await this.users.reset(who.user);
  }

  /** Runs one credential check under the limits; `undefined` from `check` is a failure. */
  async check<T>(who: Caller, check: () => Promise<T | undefined>): Promise<T | undefined> {
    const userCounted = await this.admit(who);
    const result = await check();
    if (result === undefined) await this.failed(who);
    // Nothing to clear when the read just made found no failure: thousands of agents reconnecting
    // with good credentials then cost two reads each, not three (a failure counted since is left to
    // its window, as one counted on another node would be).
    else if (userCounted) await this.succeeded(who);
    return result;
  }
}
