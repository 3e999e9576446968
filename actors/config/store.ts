import { etcdKeys } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { EtcdAdapter, EtcdRecord } from '../runtime/etcd.ts';

/** `lease`: the etcd lease id of a key with a deadline ('0' or absent: none). */
export interface ConfigEntry<T = unknown> {
  key: string;
  value: T;
  modRevision: number;
  lease?: string;
}

/** `leaseTtlSec` > 0: etcd deletes the key after that many seconds (at least 1). */
interface WriteOptions {
  leaseTtlSec?: number;
}

/** A write lost to a concurrent one (PATCH with a stale view, create of an existing key). */

export class ConfigConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigConflictError';
  }
}

/**
 * Every node's view of the configuration in etcd: listed once, then kept current by a watch, so
 * reads (API lists, handshakes, RBAC) never touch etcd. Writes go to etcd and return once this
 * node's view has caught up with them, so a client reads its own writes from the node it wrote to.
 */
export class ConfigStore {
  private readonly values = new Map<string, ConfigEntry>();
  private watch: { close(): Promise<void> } | undefined;
  private revision = 0;
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private listeners: Array<() => void> = [];
  /** Bumped on every change: caches built from the configuration key themselves on it. */
  generation = 0;

  constructor(
    private readonly etcd: EtcdAdapter,
    private readonly log: Logger,
  ) {}

  start(): Promise<void> {
    let resolveReady!: () => void;
    const ready = new Promise<void>((r) => {
      resolveReady = r;
    });
    this.watch = this.etcd.watchPrefix(etcdKeys.configPrefix, {
      onSnapshot: (records, revision) => {
        this.values.clear();
        for (const r of records) this.values.set(r.key, entryOf(r));
        this.advance(revision);
        resolveReady();
      },
      onEvent: (ev) => {
        if (ev.type === 'put') {
          this.values.set(ev.record.key, entryOf(ev.record));
          this.advance(ev.record.modRevision);
        } else {
          this.values.delete(ev.key);
          this.advance(ev.revision);
        }
      },
      onError: (err) => this.log.warn('configuration watch error, resyncing', { error: err.message }),
    });
    return ready;
  }

  private advance(revision: number): void {
    this.generation++;
    if (revision > this.revision) this.revision = revision;
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) {
        if (w.revision <= this.revision) w.resolve();
        else still.push(w);
      }
      this.waiters = still;
    }
    for (const fn of this.listeners) fn();
  }

  /** Called after every change seen by this node. */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  /** Resolves once this node has seen etcd revision `revision` (bounded: the watch may be resyncing). */
  caughtUp(revision: number, timeoutMs = 2000): Promise<void> {
    if (revision <= this.revision) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.waiters.push({
        revision,
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
      });
    });
  }

  get<T>(key: string): T | undefined {
    return this.values.get(key)?.value as T | undefined;
  }
  entry<T>(key: string): ConfigEntry<T> | undefined {
    return this.values.get(key) as ConfigEntry<T> | undefined;
  }

  /** Values under `prefix`, ordered by key. */
  list<T>(prefix: string): T[] {
    return this.entries<T>(prefix).map((e) => e.value);
  }

  entries<T>(prefix: string): ConfigEntry<T>[] {
    const out: ConfigEntry<T>[] = [];
    for (const [k, e] of this.values)
      if (k.startsWith(prefix) && e.value !== undefined) out.push(e as ConfigEntry<T>);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Creates `key`; a ConfigConflictError when it exists. */
  async create(key: string, value: unknown, opts?: WriteOptions): Promise<void> {
    const lease = await this.leaseFor(opts);
    const res = await this.etcd.createIfAbsent(key, JSON.stringify(value), lease).catch((err) => {
      this.drop(lease);
      throw err;
    });
    if (!res.created) {
      this.drop(lease);
      throw new ConfigConflictError('already exists');
    }
    await this.caughtUp(res.revision);
  }

  /** Creates or replaces `key`; true when it was created. */
  async put(key: string, value: unknown, opts?: WriteOptions): Promise<boolean> {
    const lease = await this.leaseFor(opts);
    const { revision, existed, prevLease } = await this.etcd
      .putReporting(key, JSON.stringify(value), lease)
      .catch((err) => {
        this.drop(lease);
        throw err;
      });
    if (prevLease !== lease) this.drop(prevLease);
    await this.caughtUp(revision);
    return !existed;
  }

  /** Replaces `key` only if it is still at `modRevision`; a ConfigConflictError otherwise. */
  async replace(key: string, value: unknown, modRevision: number, opts?: WriteOptions): Promise<void> {
    const before = this.values.get(key);
    const lease = await this.leaseFor(opts);
    const revision = await this.etcd
      .putIfModRevision(key, JSON.stringify(value), modRevision, lease)
      .catch((err) => {
        this.drop(lease);
        throw err;
      });
    if (revision === undefined) {
      this.drop(lease);
      throw new ConfigConflictError('changed concurrently');
    }
    // The guard held, so the replaced version is the one at modRevision, if this node saw it.
    if (before?.modRevision === modRevision) this.drop(before.lease);
    await this.caughtUp(revision);
  }

  /** Deletes `key`; false when it did not exist. */
  async remove(key: string): Promise<boolean> {
    const lease = this.values.get(key)?.lease;
    const { deleted, revision } = await this.etcd.deleteReporting(key);
    if (deleted) this.drop(lease);
    await this.caughtUp(revision);
    return deleted;
  }

  // A put without a lease detaches the key from any earlier one, so a replace drops an old deadline.
  private async leaseFor(opts: WriteOptions | undefined): Promise<string | undefined> {
    const ttl = opts?.leaseTtlSec;
    return ttl !== undefined && ttl > 0 ? this.etcd.grantDeadlineLease(ttl) : undefined;
  }

  // Every write gets a lease of its own, so revoking a replaced or unused one deletes no live key;
  // without this, leases of long deadlines would pile up in etcd.
  private drop(lease: string | undefined): void {
    if (lease && lease !== '0') void this.etcd.revokeLeaseId(lease);
  }

  async stop(): Promise<void> {
    await this.watch?.close();
  }
}

function entryOf(r: EtcdRecord): ConfigEntry {
  let value: unknown;
  try {
    value = JSON.parse(r.value);
  } catch {
    value = undefined;
  }
  return { key: r.key, value, modRevision: r.modRevision, ...(r.lease !== '0' ? { lease: r.lease } : {}) };
}
