import { AsyncLocalStorage } from 'node:async_hooks';
import {
  circuitBreaker,
  ConsecutiveBreaker,
  ExponentialBackoff,
  handleWhen,
  isBrokenCircuitError,
  retry,
  type IDefaultPolicyContext,
  type IPolicy,
} from 'cockatiel';
import {
  Etcd3,
  GRPCUnavailableError,
  isRecoverableError,
  type CallContext,
  type IKeyValue,
  type Lease,
  type Watcher,
} from 'etcd3';

// The one module that talks to etcd. Everything else sees plain records with numeric revisions.

/**
 * How the etcd client fails over (docs/architecture.md#connections-to-etcd-and-nats). The bound to
 * meet: configuration writes resume within 2 s after the etcd leader dies, with elections of about
 * 1-1.5 s (etcd's default heartbeat 100 ms and election timeout 1000 ms).
 */
const DEFAULTS = {
  /** Connecting to a member; a dead one refuses at once, this bounds a black-holed one. */
  dialTimeoutMs: 2000,
  /**
   * A unary call is retried, on another member each time, until it is this old (then the last
   * error is thrown). Covers an election with room to spare; `callTimeoutMs` overrides it.
   */
  callBudgetMs: 5000,
  /**
   * Deadline of one attempt of a write (put, delete, txn, lease grant or revoke) while the call is
   * younger than `shortAttemptsForMs`. A follower forwards a write to the leader, and one forwarded
   * to a leader that just died is lost: it waits out its deadline (etcd's own is 7 s), while the
   * next leader is elected in about a second. So this deadline bounds how long a write in flight
   * at the leader's death stalls: the retry goes to another member once the election is over.
   * A write takes milliseconds on a healthy etcd. Measured (test/cluster/etcd-leader-loss.test.ts):
   * 5000 stalled writes 5 s; 400 ended the first write up to 0.6 s after the election, 250 up to 0.5 s
   * and mostly within 0.3 s.
   */
  writeAttemptMs: 250,
  /** Later attempts of a write get `slowAttemptMs`: an etcd that is only slow still gets it through. */
  shortAttemptsForMs: 3000,
  /**
   * Deadline of one attempt of a read, and of a write past `shortAttemptsForMs`. A linearizable
   * read waiting on a dead leader is ended by the server as soon as the next leader is elected
   * ("leader changed"), and a long list needs time, so reads need no short deadline.
   */
  slowAttemptMs: 5000,
  /**
   * Pause between attempts: from 20 ms, exponentially (with jitter) up to 50 ms, so a call retries
   * often while there is no leader and goes through soon after there is one.
   * etcd3's default retries three times at once, which ends a call during an election.
   */
  retryInitialMs: 20,
  retryMaxMs: 50,
  /**
   * Per member, a circuit breaker that skips a member after 3 consecutive connection failures, for
   * 1 s, then lets one call try it again. Only a failure to reach the member counts: an answer of a
   * live member ("no leader", "leader changed") or a deadline (a write lost with the old leader) is
   * no reason to avoid it. etcd3's default (3 failures of any kind, open 5 s) opened the breakers of
   * the live members too during an election, failing every call for 5 s.
   */
  breakerFailures: 3,
  breakerHalfOpenMs: 1000,
  /** Watch streams reconnect after 50 ms, backing off up to 1 s (etcd3's default: up to 30 s). */
  watchBackoffInitialMs: 50,
  watchBackoffMaxMs: 1000,
} as const;

/** When the unary call being attempted began (set by the retry policy, read by the deadline). */
const callStart = new AsyncLocalStorage<number>();

/** Calls that only read, or that a leader's death does not leave hanging. */
const isRead = (ctx: CallContext) =>
  (ctx.service === 'KV' && ctx.method === 'range') ||
  ctx.service === 'Maintenance' ||
  ctx.service === 'Auth' ||
  (ctx.service === 'Lease' && (ctx.method === 'leaseTimeToLive' || ctx.method === 'leaseLeases'));

/** The member could not be reached (refused, dropped): not an answer of a live member. */
const isHostFault = (err: Error) =>
  err instanceof GRPCUnavailableError && !err.message.includes('etcdserver:');

/** etcd3's global policy: retries on another member, pausing, until the call is `budgetMs` old. */
function retryPolicy(budgetMs: number): IPolicy<IDefaultPolicyContext> {
  const inner = retry(
    handleWhen(
      (err) =>
        (isRecoverableError(err) || isBrokenCircuitError(err)) &&
        Date.now() - (callStart.getStore() ?? 0) < budgetMs,
    ),
    {
      maxAttempts: Number.POSITIVE_INFINITY,
      backoff: new ExponentialBackoff({
        initialDelay: DEFAULTS.retryInitialMs,
        maxDelay: DEFAULTS.retryMaxMs,
      }),
    },
  );
  return {
    _altReturn: undefined as never,
    onSuccess: inner.onSuccess,
    onFailure: inner.onFailure,
    // etcd3 runs every attempt inside this, so the deadline of each attempt can see the call's age.
    execute: (fn, signal) => callStart.run(Date.now(), () => inner.execute(fn, signal)),
  };
}

/** Each attempt's deadline (streams have none: watches and keepalives live on). */
function attemptDeadline(ctx: CallContext): { deadline?: number } {
  if (ctx.isStream) return {};
  const now = Date.now();
  const age = now - (callStart.getStore() ?? now);
  const short = !isRead(ctx) && age < DEFAULTS.shortAttemptsForMs;
  return { deadline: now + (short ? DEFAULTS.writeAttemptMs : DEFAULTS.slowAttemptMs) };
}

export interface EtcdRecord {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
  lease: string;
}

interface EtcdAdapterOptions {
  /** Without user info: etcd3 ignores credentials written into a URL. */
  endpoints: string[];
  auth?: { username: string; password: string };
  /** PEM texts; without a CA the system's authorities are trusted. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** How long a unary call is retried (DEFAULTS.callBudgetMs); etcd3 itself would retry 3 times at once. */
  callTimeoutMs?: number;
}

const toRecord = (kv: IKeyValue): EtcdRecord => ({
  key: kv.key.toString('utf8'),
  value: kv.value.toString('utf8'),
  createRevision: Number(kv.create_revision),
  modRevision: Number(kv.mod_revision),
  lease: String(kv.lease ?? '0'),
});

type WatchEvent = { type: 'put'; record: EtcdRecord } | { type: 'delete'; key: string; revision: number };

/** A list-then-watch subscription: a snapshot, then every change after it, resynced on any error. */
interface PrefixWatch {
  close(): Promise<void>;
}

export interface SessionLease {
  id: string;
  ttlSeconds: number;
  /** Sends one keepalive; resolves with the TTL the server granted, 0 when the lease is gone. */
  keepalive(timeoutMs: number): Promise<number>;
  revoke(): Promise<void>;
}

/** A key held under a lease of this client (`EtcdAdapter.lock`). */
export interface EtcdLock {
  /** The lock key's create revision: a write guarded by it fails once the lock is gone. */
  createRevision: number;
  release(): Promise<void>;
}

/** The end of the range of keys starting with `prefix` (the prefix with its last byte plus one). */
function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  end[end.length - 1]! += 1;
  return end;
}

export class EtcdAdapter {
  readonly client: Etcd3;
  private readonly callTimeoutMs: number;

  constructor(readonly opts: EtcdAdapterOptions) {
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULTS.callBudgetMs;
    this.client = new Etcd3({
      hosts: opts.endpoints,
      dialTimeout: DEFAULTS.dialTimeoutMs,
      faultHandling: {
        global: retryPolicy(this.callTimeoutMs),
        host: () =>
          circuitBreaker(handleWhen(isHostFault), {
            halfOpenAfter: DEFAULTS.breakerHalfOpenMs,
            breaker: new ConsecutiveBreaker(DEFAULTS.breakerFailures),
          }),
        // etcd3 types this as a backoff, then calls next() on it for the first one: a started one works.
        watchBackoff: new ExponentialBackoff({
          initialDelay: DEFAULTS.watchBackoffInitialMs,
          maxDelay: DEFAULTS.watchBackoffMaxMs,
        }).next(),
      },
      ...(opts.auth ? { auth: opts.auth } : {}),
      // grpc's createSsl takes a missing root certificate as "the system's"; etcd3's type insists on one.
      ...(opts.tls
        ? {
            credentials: {
              rootCertificate: opts.tls.ca as Buffer,
              privateKey: opts.tls.key,
              certChain: opts.tls.cert,
            },
          }
        : {}),
      defaultCallOptions: attemptDeadline,
    });
  }

  async get(key: string): Promise<EtcdRecord | undefined> {
    const res = await this.client.get(key).exec();
    const kv = res.kvs[0];
    return kv ? toRecord(kv) : undefined;
  }

  async list(prefix: string): Promise<{ records: EtcdRecord[]; revision: number }> {
    const res = await this.client.getAll().prefix(prefix).exec();
    return { records: res.kvs.map(toRecord), revision: Number(res.header.revision) };
  }

  async put(key: string, value: string): Promise<void> {
    await this.client.put(key).value(value);
  }

  async delete(key: string): Promise<void> {
    await this.client.delete().key(key);
  }

  /** Put that reports the resulting revision and whether the key existed before. */
  async putReporting(
    key: string,
    value: string,
    leaseId?: string,
  ): Promise<{ revision: number; existed: boolean; prevLease?: string }> {
    const put = this.client.put(key).value(value);
    if (leaseId) put.lease(leaseId);
    const res = await put.getPrevious();
    const prevLease =
      res.key !== undefined && res.lease && String(res.lease) !== '0' ? String(res.lease) : undefined;
    return { revision: Number(res.header.revision), existed: res.key !== undefined, prevLease };
  }

  /** Put guarded by the key's mod revision (0: must not exist); undefined when the guard failed. */
  async putIfModRevision(
    key: string,
    value: string,
    modRevision: number,
    leaseId?: string,
  ): Promise<number | undefined> {
    const put = this.client.put(key).value(value);
    if (leaseId) put.lease(leaseId);
    const res = await this.client.if(key, 'Mod', '==', modRevision).then(put).commit();
    return res.succeeded ? Number(res.header.revision) : undefined;
  }

  /** Delete that reports whether the key existed and the resulting revision. */
  async deleteReporting(key: string): Promise<{ deleted: boolean; revision: number }> {
    const res = await this.client.delete().key(key).exec();
    return { deleted: Number(res.deleted) > 0, revision: Number(res.header.revision) };
  }

  /** Put with a lease (sessions that expire on their own). */
  async putWithLease(key: string, value: string, ttlSeconds: number): Promise<void> {
    const lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    await lease.put(key).value(value);
    lease.release();
  }

  /** Creates `key` only when absent. Returns the create revision on success, else the holder. */
  async createIfAbsent(
    key: string,
    value: string,
    leaseId?: string,
  ): Promise<{ created: true; revision: number } | { created: false; existing?: EtcdRecord }> {
    const put = this.client.put(key).value(value);
    if (leaseId) put.lease(leaseId);
    const res = await this.client.if(key, 'Create', '==', 0).then(put).else(this.client.get(key)).commit();
    if (res.succeeded) return { created: true, revision: Number(res.header.revision) };
    const kv = res.responses[0]?.response_range?.kvs[0];
    return { created: false, existing: kv ? toRecord(kv) : undefined };
  }

  /** Writes `guardKey` and `entries` in one transaction, only when `guardKey` does not exist yet. */
  async createAllIfAbsent(
    guardKey: string,
    guardValue: string,
    entries: Array<[string, string]>,
  ): Promise<boolean> {
    const puts = [
      this.client.put(guardKey).value(guardValue),
      ...entries.map(([k, v]) => this.client.put(k).value(v)),
    ];
    const res = await this.client
      .if(guardKey, 'Create', '==', 0)
      .then(...puts)
      .commit();
    return res.succeeded;
  }

  /**
   * Creates `key` only when no key at all starts with `prefix` (etcd compares every key of a range:
   * none there is a create revision of 0). How a brand-new datastore is told from an old one.
   */
  async createIfPrefixEmpty(prefix: string, key: string, value: string): Promise<boolean> {
    const res = await this.client.kv.txn({
      compare: [
        {
          key: Buffer.from(prefix),
          range_end: prefixEnd(prefix),
          target: 'Create',
          result: 'Equal',
          create_revision: 0,
        },
      ],
      success: [{ request_put: { key: Buffer.from(key), value: Buffer.from(value) } }],
    });
    return res.succeeded;
  }

  /**
   * Put guarded by other keys (and `key` itself): each at its mod revision (0: absent) or still the
   * incarnation created at a create revision. False when a guard failed; nothing was written then.
   */
  async putGuarded(
    key: string,
    value: string,
    guards: Array<{ key: string; modRevision: number } | { key: string; createRevision: number }>,
  ): Promise<boolean> {
    const [first, ...rest] = guards.map((g): [string, 'Mod' | 'Create', number] =>
      'modRevision' in g ? [g.key, 'Mod', g.modRevision] : [g.key, 'Create', g.createRevision],
    );
    if (!first) throw new Error('putGuarded needs a guard');
    const txn = this.client.if(first[0], first[1], '==', first[2]);
    for (const [k, target, revision] of rest) txn.and(k, target, '==', revision);
    const res = await txn.then(this.client.put(key).value(value)).commit();
    return res.succeeded;
  }

  /**
   * Takes `key` as a lock: created with a lease this client keeps alive until `release`, so a holder
   * that dies lets go within `ttlSeconds`. A lock held by another is answered with its value.
   */
  async lock(
    key: string,
    value: string,
    ttlSeconds: number,
  ): Promise<{ held: EtcdLock } | { heldBy: string }> {
    const lease = this.client.lease(ttlSeconds);
    // A lost lease ends the lock; writes guarded by its create revision then fail.
    lease.on('lost', () => {});
    const id = await lease.grant();
    const res = await this.createIfAbsent(key, value, id).catch(async (err: unknown) => {
      await lease.revoke().catch(() => {});
      throw err;
    });
    if (!res.created) {
      await lease.revoke().catch(() => {});
      return { heldBy: res.existing?.value ?? '' };
    }
    return {
      held: {
        createRevision: res.revision,
        release: () => lease.revoke({ deadline: Date.now() + this.callTimeoutMs }).catch(() => {}),
      },
    };
  }

  /** Deletes `key` only while it is still the incarnation created at `createRevision`. */
  async deleteIfCreatedAt(key: string, createRevision: number): Promise<boolean> {
    const res = await this.client
      .if(key, 'Create', '==', createRevision)
      .then(this.client.delete().key(key))
      .commit();
    return res.succeeded;
  }

  async grantLease(ttlSeconds: number): Promise<SessionLease> {
    const lease: Lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    const id = await lease.grant();
    // etcd3 reports a lost lease through this event too; our caller reads the keepalive result.
    lease.on('lost', () => {});
    return {
      id,
      ttlSeconds,
      keepalive: async (timeoutMs) => {
        try {
          const res = await lease.keepaliveOnce({ deadline: Date.now() + timeoutMs });
          return Number(res.TTL);
        } catch (err) {
          if ((err as Error).name === 'EtcdLeaseInvalidError') return 0;
          throw err;
        }
      },
      revoke: () => lease.revoke({ deadline: Date.now() + this.callTimeoutMs }).catch(() => {}),
    };
  }

  /**
   * Grants a lease nobody keeps alive: etcd deletes the keys put with it after `ttlSeconds`, even
   * when every backend is down meanwhile (durable deadlines such as silenced expiry).
   */
  async grantDeadlineLease(ttlSeconds: number): Promise<string> {
    const res = await this.client.leaseClient.leaseGrant({ TTL: Math.max(1, Math.ceil(ttlSeconds)) });
    return String(res.ID);
  }

  /** Revokes a lease by id, for a lease left behind by an earlier run of this node. */
  async revokeLeaseId(id: string): Promise<void> {
    await this.client.leaseClient.leaseRevoke({ ID: id }).catch(() => {});
  }

  /**
   * List-then-watch over a prefix: `onSnapshot` gets the full list, `onEvent` every later change.
   * On any watcher error the list is taken again, so a compacted revision or a lost stream heals.
   */
  watchPrefix(
    prefix: string,
    handlers: {
      onSnapshot: (records: EtcdRecord[], revision: number) => void;
      onEvent: (ev: WatchEvent) => void;
      onError?: (err: Error) => void;
    },
  ): PrefixWatch {
    let watcher: Watcher | undefined;
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    const start = async (): Promise<void> => {
      if (closed) return;
      try {
        const { records, revision } = await this.list(prefix);
        if (closed) return;
        handlers.onSnapshot(records, revision);
        const w = await this.client
          .watch()
          .prefix(prefix)
          .startRevision(String(revision + 1))
          .create();
        if (closed) {
          await w.cancel();
          return;
        }
        watcher = w;
        w.on('put', (kv) => handlers.onEvent({ type: 'put', record: toRecord(kv) }));
        w.on('delete', (kv) =>
          handlers.onEvent({
            type: 'delete',
            key: kv.key.toString('utf8'),
            revision: Number(kv.mod_revision),
          }),
        );
        w.on('error', (err) => {
          handlers.onError?.(err);
          restart();
        });
      } catch (err) {
        handlers.onError?.(err as Error);
        restart();
      }
    };
    const restart = () => {
      if (closed || retry) return;
      const old = watcher;
      watcher = undefined;
      old?.removeAllListeners();
      void old?.cancel().catch(() => {});
      retry = setTimeout(() => {
        retry = undefined;
        void start();
      }, 500);
    };
    void start();
    return {
      close: async () => {
        closed = true;
        if (retry) clearTimeout(retry);
        const w = watcher;
        watcher = undefined;
        await w?.cancel().catch(() => {});
      },
    };
  }

  /** etcd's own version, for /version. */
  async version(): Promise<string> {
    const status = await this.client.maintenance.status();
    return status.version;
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
