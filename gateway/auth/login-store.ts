import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { RateLimiterRes, type RateLimiterStoreAbstract as StoreAbstract } from 'rate-limiter-flexible';
import { CasConflictError, type KvStore } from '../../actors/runtime/kv-store.ts';
import type { Logger } from '../../lib/log.ts';
import { withTimeout } from '../../lib/timeout.ts';

// The store of the login counters shared by every node: a rate-limiter-flexible store over a JetStream
// KV bucket, its increments made with compare-and-set (docs/compatibility.md#login-limits).

// The package's README asks a new store to extend this class, and its types declare it, but its entry
// point does not export it; the version is pinned in package.json.
const RateLimiterStoreAbstract = createRequire(import.meta.url)(
  'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js',
) as typeof StoreAbstract;

const DEFAULTS = {
  /** Compare-and-set rounds of one change before it counts as a store failure (then memory counts it). */
  casAttempts: 20,
  /** Each lost round waits up to this many ms times its number, so a burst on one key spreads out. */
  casBackoffMs: 5,
  /**
   * A login or agent handshake waits at most this long for the shared counts; past it this node's
   * memory counts, as while NATS is away. A JetStream request may otherwise wait 5 s, and a
   * handshake makes two in a row: agents reconnecting to a busy node were cut by the balancer's
   * timeout and came back only 15 s later.
   */
  sharedDeadlineMs: 1000,
} as const;

/** One key's count, as stored: `expire` is the end of its window (epoch ms), null for no end. */
interface Counted {
  points: number;
  expire: number | null;
}

function decode(value: Uint8Array): Counted | undefined {
  try {
    const c = JSON.parse(Buffer.from(value).toString('utf8')) as Partial<Counted>;
    if (typeof c.points === 'number' && (typeof c.expire === 'number' || c.expire === null))
      return { points: c.points, expire: c.expire };
  } catch {
    // An entry we cannot read counts as none: the next write replaces it.
  }
  return undefined;
}

const encode = (c: Counted) => Buffer.from(JSON.stringify(c));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The bucket both counters of a node use, and whether it can be used now. While it cannot, each
 * operation fails and the limiter counts in this node's memory instead (its insurance limiter); the
 * first failure of such an episode is logged as a warning, its end once.
 */
export class SharedCounts {
  private away = false;

  constructor(
    readonly kv: Pick<KvStore, 'getLatest' | 'put' | 'remove'>,
    /** False while NATS is known to be away: fail at once rather than each login waiting out a timeout. */
    private readonly connected: () => boolean,
    private readonly log: Logger,
  ) {}

  async use<T>(op: () => Promise<T>): Promise<T> {
    try {
      if (!this.connected()) throw new Error('not connected to NATS');
      const result = await withTimeout(op(), DEFAULTS.sharedDeadlineMs, 'the shared login counts');
      if (this.away) {
        this.away = false;
        this.log.info('failed logins are counted for the whole cluster again');
      }
      return result;
    } catch (err) {
      if (!this.away) {
        this.away = true;
        const error = (err as Error).message;
        this.log.warn("failed logins cannot be shared through NATS: this node's memory counts them", {
          error,
        });
      }
      throw err;
    }
  }
}

/**
 * A rate-limiter-flexible store over a JetStream KV bucket. Keys are `<kind>.<digest>`: the names and
 * addresses counted are whatever a caller sent, which NATS keys could not hold (and a password typed
 * as a user name must not be stored as typed). Each change reads the key's latest entry and writes
 * with its revision, again on a conflict, so concurrent failures on several nodes all count.
 */
export class RateLimiterNatsKv extends RateLimiterStoreAbstract {
  constructor(
    opts: Omit<ConstructorParameters<typeof StoreAbstract>[0], 'storeClient'>,
    private readonly shared: SharedCounts,
  ) {
    super({ ...opts, storeClient: shared });
  }

  private kvKey(rlKey: string): string {
    return `${this.keyPrefix}.${createHash('sha256').update(rlKey).digest('base64url')}`;
  }

  /** The key's live count (none once its window ended) and the revision to write against. */
  private async read(key: string): Promise<{ counted?: Counted; revision: number }> {
    const e = await this.shared.kv.getLatest(key);
    if (!e) return { revision: 0 };
    const c = e.deleted ? undefined : decode(e.value);
    const live = c && (c.expire === null || c.expire > Date.now());
    return { counted: live ? c : undefined, revision: e.revision };
  }

  /** Retries `write` after a lost compare-and-set, reading again each time. */
  private async cas<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        if (!(err instanceof CasConflictError) || attempt >= DEFAULTS.casAttempts) throw err;
        await sleep(Math.random() * attempt * DEFAULTS.casBackoffMs);
      }
    }
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, c: Counted): RateLimiterRes {
    return new RateLimiterRes(
      Math.max(this.points - c.points, 0),
      c.expire === null ? -1 : Math.max(c.expire - Date.now(), 0),
      c.points,
      c.points === changedPoints,
    );
  }

  /** Adds `points` within the key's window (a new window when none is running); `forceExpire` sets both. */
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<Counted> {
    const key = this.kvKey(rlKey);
    return this.shared.use(() =>
      this.cas(async () => {
        const { counted, revision } = await this.read(key);
        const next =
          counted && !forceExpire
            ? { points: counted.points + points, expire: counted.expire }
            : { points, expire: msDuration > 0 ? Date.now() + msDuration : null };
        await this.shared.kv.put(key, encode(next), revision);
        return next;
      }),
    );
  }

  async _get(rlKey: string): Promise<Counted | null> {
    const key = this.kvKey(rlKey);
    return this.shared.use(async () => (await this.read(key)).counted ?? null);
  }

  /** Writes only when there is a live count: every good login clears its user's, nearly always none. */
  async _delete(rlKey: string): Promise<boolean> {
    const key = this.kvKey(rlKey);
    return this.shared.use(() =>
      this.cas(async () => {
        const { counted, revision } = await this.read(key);
        if (!counted) return false;
        await this.shared.kv.remove(key, revision);
        return true;
      }),
    );
  }
}
