import { etcdKeys, shardOfOwnerKey } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { EtcdAdapter, EtcdRecord } from './etcd.ts';
import type { Membership } from './membership.ts';
import { shardsOf } from './placement.ts';

const DEFAULTS = {
  /** A failed reconcile pass or shard activation is tried again after this long. */
  retryMs: 1000,
  /** Shards acquired or released at once. */
  concurrency: 32,
  /**
   * After the member list changed, a node that held all its shards before has this long to take
   * the new ones (their handoff waits for queued turns, up to 10 s) before it counts them as not
   * held; otherwise every survivor of a leave would turn not ready at once.
   */
  handoffGraceMs: 15_000,
} as const;

/** What the shard manager drives: the actor host starts and stops work per shard. */
export interface ShardHost {
  /** This node now owns `shard` under fencing token `fence`: load its timers and open its mailbox. */
  activate(shard: number, fence: number): Promise<void>;
  /** Graceful handoff: close the mailbox, finish turns in flight, flush state. */
  deactivate(shard: number): Promise<void>;
  /** Ownership is gone already (lease lost, key deleted): stop at once, flush nothing. */
  drop(shard: number): void;
  /** Set by the manager: lets the host ask whether a shard is still its own after a failed write. */
  verifyOwnership?: (shard: number) => Promise<boolean>;
}

interface OwnerInfo {
  node: string;
  lease: string;
  createRevision: number;
}

/**
 * What this node knows of one shard's owner key, and at which etcd revision it learnt it (a put's mod
 * revision, a delete's revision, a snapshot's revision, or our own create). The owner watch lags
 * behind transaction answers: a change older than what is known is stale and is not applied
 * (docs/architecture.md#shard-ownership-and-handoff).
 */
interface OwnerView {
  owner: OwnerInfo | undefined;
  revision: number;
}

/**
 * Shard ownership. The desired owner of each shard is the rendezvous winner among live members;
 * a node takes a shard only through an etcd transaction that creates the owner key bound to its
 * lease, so two nodes never hold one shard, whatever they believe about membership. The owner
 * key's create revision is the shard's fencing token.
 */
export class ShardManager {
  private readonly owned = new Map<number, number>();
  private readonly owners = new Map<number, OwnerView>();
  private ownersLoaded = false;
  private watch: { close(): Promise<void> } | undefined;
  private running: Promise<void> | undefined;
  private dirty = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The placement table's shards for this node, for the member list it was computed from. */
  private desired: { key: string; shards: Set<number> } | undefined;
  private membersKey = '';
  private membersChangedAt = 0;
  /**
   * What the table gave this node before the last change of the member list, when it was a member
   * then: the shards of `coverage`'s handoff grace are those the change added, never these.
   */
  private previousDesired: Set<number> | undefined;
  /** Shards owned whose activation has not finished: not served yet, so not held for readiness. */
  private readonly activating = new Set<number>();
  /**
   * The lease under which this node last held every shard of the table. The handoff grace of
   * `coverage` is for that lease only: a node that rejoined under a new one (after its guard ran out,
   * even if no session-lost callback came) must hold its shards before it is ready again.
   */
  private settledLease: string | undefined;

  constructor(
    private readonly etcd: EtcdAdapter,
    private readonly membership: Membership,
    private readonly host: ShardHost,
    private readonly opts: { shardCount: number; log: Logger; concurrency?: number },
  ) {}

  start(): void {
    this.host.verifyOwnership = (s) => this.verify(s);
    this.membership.onMembersChanged((members) => {
      const key = members.join('\n');
      if (key !== this.membersKey) {
        const before = this.membersKey === '' ? [] : this.membersKey.split('\n');
        const me = this.membership.node;
        this.previousDesired = before.includes(me) ? shardsOf(me, before, this.opts.shardCount) : undefined;
        this.membersKey = key;
        this.membersChangedAt = Date.now();
      }
      this.reconcile();
    });
    this.membership.onSessionLost(() => {
      this.settledLease = undefined;
      this.dropAll();
    });
    this.watch = this.etcd.watchPrefix(etcdKeys.shardsPrefix, {
      onSnapshot: (records, revision) => this.applySnapshot(records, revision),
      onEvent: (ev) => {
        if (ev.type === 'put') {
          const s = shardOfOwnerKey(ev.record.key);
          if (s === undefined) return;
          const { value: node, lease, createRevision } = ev.record;
          this.learn(s, { node, lease, createRevision }, ev.record.modRevision);
        } else {
          const s = shardOfOwnerKey(ev.key);
          if (s === undefined) return;
          if (!this.learn(s, undefined, ev.revision)) return;
          if (this.owned.has(s)) this.lose(s, 'owner key deleted');
        }
        this.reconcile();
      },
      onError: (err) => this.opts.log.warn('shard owner watch error, resyncing', { error: err.message }),
    });
  }

  /**
   * Records what is known of a shard's owner as of `revision`; false (nothing changed) when this node
   * already knows a later state, e.g. the key it created itself after the change the watch reports now.
   */
  private learn(shard: number, owner: OwnerInfo | undefined, revision: number): boolean {
    const known = this.owners.get(shard);
    if (known && known.revision > revision) return false;
    this.owners.set(shard, { owner, revision });
    return true;
  }

  private ownerOf(shard: number): OwnerInfo | undefined {
    return this.owners.get(shard)?.owner;
  }

  /**
   * The full list, taken at `revision` (first start, or a resync after a watch error). A shard this
   * node took after that revision is newer than the list and stays; one it took before and the list
   * does not show as its own was lost while the watch was down.
   */
  private applySnapshot(records: EtcdRecord[], revision: number): void {
    const listed = new Map<number, OwnerInfo>();
    for (const r of records) {
      const s = shardOfOwnerKey(r.key);
      if (s !== undefined) listed.set(s, { node: r.value, lease: r.lease, createRevision: r.createRevision });
    }
    for (const [s, view] of [...this.owners])
      if (view.revision <= revision && !listed.has(s)) this.owners.delete(s);
    for (const [s, owner] of listed) this.learn(s, owner, revision);
    this.ownersLoaded = true;
    for (const [s, fence] of [...this.owned]) {
      if (fence > revision) continue;
      if (listed.get(s)?.createRevision !== fence) this.lose(s, 'owner key gone');
    }
    this.reconcile();
  }

  /** Re-reads a shard's owner key: false (and the shard dropped) when it is no longer ours. */
  async verify(shard: number): Promise<boolean> {
    const fence = this.owned.get(shard);
    if (fence === undefined) return false;
    const rec = await this.etcd.get(etcdKeys.shardOwner(shard));
    if (rec && rec.createRevision === fence && rec.lease === this.membership.leaseId) return true;
    this.lose(shard, 'owner key changed');
    return false;
  }

  private lose(shard: number, reason: string, quiet = false): void {
    if (!this.owned.delete(shard)) return;
    if (!quiet) this.opts.log.warn('shard lost', { shard, reason });
    this.host.drop(shard);
  }

  private dropAll(): void {
    const shards = [...this.owned.keys()];
    for (const s of shards) this.lose(s, 'session lost', true);
    if (shards.length) this.opts.log.warn('dropped every shard: session lost', { shards: shards.length });
  }

  /** Brings ownership in line with the desired table; runs one pass at a time, again if asked. */
  reconcile(): void {
    if (this.stopped) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = this.pass()
      .catch((err) => {
        this.opts.log.warn('shard reconcile failed, retrying', { error: (err as Error).message });
        this.scheduleRetry();
      })
      .finally(() => {
        this.running = undefined;
        if (this.dirty) {
          this.dirty = false;
          this.reconcile();
        }
      });
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.reconcile();
    }, DEFAULTS.retryMs);
  }

  private async pass(): Promise<void> {
    const leaseId = this.membership.leaseId;
    if (!this.ownersLoaded || !leaseId || !this.membership.guardOk()) return;
    const me = this.membership.node;
    const members = this.membership.memberNames();
    if (!members.includes(me)) return;
    const desired = shardsOf(me, members, this.opts.shardCount);

    const toRelease = [...this.owned.keys()].filter((s) => !desired.has(s));
    // A key bound to our own lease that we do not hold (its activation failed and the delete did
    // too) is ours to take back: the acquire transaction finds it and adopts it.
    const toAcquire = [...desired].filter((s) => {
      if (this.owned.has(s)) return false;
      const o = this.ownerOf(s);
      return !o || o.lease === leaseId;
    });
    await this.handOff(toRelease, 'rebalance');
    await this.parallel(toAcquire, (s) => this.acquire(s, leaseId));
    if ([...desired].every((s) => this.owned.has(s))) this.settledLease = leaseId;
    // Shards held by a stale record of ourselves (an earlier lease) are freed by Membership.join.
  }

  private async parallel(
    items: number[],
    fn: (s: number) => Promise<void>,
    evenWhenStopped = false,
  ): Promise<void> {
    const limit = this.opts.concurrency ?? DEFAULTS.concurrency;
    let i = 0;
    const worker = async () => {
      while (i < items.length && (evenWhenStopped || !this.stopped)) await fn(items[i++]!);
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  }

  private async acquire(shard: number, leaseId: string): Promise<void> {
    const me = this.membership.node;
    const key = etcdKeys.shardOwner(shard);
    const res = await this.etcd.createIfAbsent(key, me, leaseId);
    let fence: number | undefined;
    if (res.created) fence = res.revision;
    else if (res.existing && res.existing.value === me && res.existing.lease === leaseId) {
      // A retried transaction whose first attempt had committed: the key is ours.
      fence = res.existing.createRevision;
    }
    if (fence === undefined) return;
    if (!this.membership.guardOk() || this.membership.leaseId !== leaseId) return;
    this.owned.set(shard, fence);
    this.learn(shard, { node: me, lease: leaseId, createRevision: fence }, fence);
    this.activating.add(shard);
    try {
      await this.host.activate(shard, fence);
    } catch (err) {
      this.opts.log.error('shard activation failed; releasing it', { shard, error: (err as Error).message });
      this.owned.delete(shard);
      this.host.drop(shard);
      await this.etcd.deleteIfCreatedAt(key, fence).catch(() => {});
      this.scheduleRetry();
    } finally {
      this.activating.delete(shard);
    }
  }

  /**
   * Releases `shards` and logs one summary line (how many, how long) rather than one per shard: a
   * stop hands off every shard the node holds (docs/operations.md#logs). At a rebalance the first
   * failure ends the pass (it is retried); at a stop every shard is tried and failures are counted.
   */
  private async handOff(shards: number[], reason: 'rebalance' | 'shutdown'): Promise<void> {
    if (shards.length === 0) return;
    const began = Date.now();
    let released = 0;
    let failed = 0;
    const one = async (s: number) => {
      if (reason === 'rebalance') {
        if (await this.release(s)) released++;
        return;
      }
      await this.release(s).then(
        (done) => void (done && released++),
        () => void failed++,
      );
    };
    try {
      await this.parallel(shards, one, reason === 'shutdown');
    } finally {
      const fields = { reason, shards: released, ms: Date.now() - began };
      if (failed > 0) this.opts.log.warn('shards handed off, some failed', { ...fields, failed });
      else if (released > 0) this.opts.log.info('shards handed off', fields);
    }
  }

  /** False when the shard was not held (any more). */
  private async release(shard: number): Promise<boolean> {
    const fence = this.owned.get(shard);
    if (fence === undefined) return false;
    await this.host.deactivate(shard);
    this.owned.delete(shard);
    await this.etcd.deleteIfCreatedAt(etcdKeys.shardOwner(shard), fence);
    return true;
  }

  /**
   * Shards the placement table gives this node that it does not hold, out of how many it gives it;
   * `member` false when the member list does not show this node. Shards held beyond the table (being
   * handed off after a join) are not counted: they are served until the handoff ends. `settling`:
   * every shard missing came with a change of the member list less than handoffGraceMs ago (the
   * table gave it to this node only then), on a node that was a member before the change and held
   * all of its own; a node that (re)joins has no such grace, and neither has a shard it held before
   * the change and lost since (docs/architecture.md#readiness-and-liveness).
   */
  coverage(now = Date.now()): { member: boolean; desired: number; missing: number; settling: boolean } {
    const me = this.membership.node;
    const members = this.membership.memberNames();
    if (!members.includes(me)) return { member: false, desired: 0, missing: 0, settling: false };
    const key = members.join('\n');
    if (this.desired?.key !== key)
      this.desired = { key, shards: shardsOf(me, members, this.opts.shardCount) };
    let missing = 0;
    let missingOfOld = 0;
    for (const s of this.desired.shards)
      if (!this.owned.has(s) || this.activating.has(s)) {
        missing++;
        if (!this.previousDesired || this.previousDesired.has(s)) missingOfOld++;
      }
    const lease = this.membership.leaseId;
    if (missing === 0 && this.membership.guardOk()) this.settledLease = lease;
    const settling =
      missing > 0 &&
      missingOfOld === 0 &&
      lease !== undefined &&
      this.settledLease === lease &&
      now - this.membersChangedAt < DEFAULTS.handoffGraceMs;
    return { member: true, desired: this.desired.shards.size, missing, settling };
  }

  /**
   * Graceful stop: no more reconciling, the member key deleted (the lease kept) so the others'
   * placement names a new owner for each shard, then every shard handed off: each moves as soon as
   * it is released, without waiting for the lease.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.running?.catch(() => {});
    await this.membership
      .retire()
      .catch((err) =>
        this.opts.log.warn('member key not deleted before the handoff', { error: (err as Error).message }),
      );
    await this.handOff([...this.owned.keys()], 'shutdown');
    await this.watch?.close();
  }
}
