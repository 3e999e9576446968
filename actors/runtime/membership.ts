import { etcdKeys } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { EtcdAdapter, SessionLease } from './etcd.ts';

const DEFAULTS = {
  /** A member name held by another session is waited for this long beyond the lease TTL. */
  nameWaitPastTtlSeconds: 10,
  nameRetryMs: 1000,
  /** Keepalives per lease TTL, and never closer together than keepaliveMinMs. */
  keepalivesPerTtl: 6,
  keepaliveMinMs: 500,
  keepaliveTimeoutMinMs: 1000,
  /** Rejoin attempts after a lost session back off from this, doubling up to rejoinBackoffMaxMs. */
  rejoinBackoffMs: 250,
  rejoinBackoffMaxMs: 5000,
} as const;

interface MembershipOptions {
  node: string;
  ttlSeconds: number;
  /** Safety margin under the lease TTL: stop before etcd could have expired the lease. */
  guardMarginMs: number;
  /** Extra facts published in the member key (addresses, version). */
  info: Record<string, unknown>;
  /** A lease id left behind by an earlier run of this node, safe to revoke. */
  previousLeaseId?: string;
  /** Told every new lease id, so a restarted node can revoke what it held before. */
  onLease?: (leaseId: string) => void;
  log: Logger;
}

type SessionListener = (reason: string) => void;

/**
 * Cluster membership: one etcd lease per node, kept alive by this class, and a member key bound to
 * it. The local lease guard is the node's own, pessimistic view of its lease: it ends
 * `ttl - margin` after the last keepalive was *sent* and successful, which is no later than etcd
 * could expire the lease, so the node stops working before anyone else may take over.
 */
export class Membership {
  private lease: SessionLease | undefined;
  private guardUntil = 0;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private guardTimer: NodeJS.Timeout | undefined;
  private memberWatch: { close(): Promise<void> } | undefined;
  private members = new Map<string, Record<string, unknown>>();
  private memberListeners: Array<(members: string[]) => void> = [];
  private lostListeners: SessionListener[] = [];
  private stopped = false;
  /** The member key is gone for good (a graceful stop); the lease lives on until the handoff ends. */
  private retired = false;
  private sessionLive = false;
  /** When etcd last answered a lease grant or keepalive (the readiness check's "etcd answered recently"). */
  private renewedAt = 0;

  constructor(
    private readonly etcd: EtcdAdapter,
    private readonly opts: MembershipOptions,
  ) {}

  get leaseId(): string | undefined {
    return this.lease?.id;
  }
  get node(): string {
    return this.opts.node;
  }

  /** True while this node may act as a member: the lease guard has not run out. */
  guardOk(): boolean {
    return this.sessionLive && Date.now() < this.guardUntil;
  }

  /** Milliseconds since etcd last renewed (or granted) this node's lease; Infinity before the first. */
  renewalAgeMs(now = Date.now()): number {
    return this.renewedAt ? now - this.renewedAt : Infinity;
  }

  /** Each live member's name and what it published in its member key. */
  memberInfo(): Array<{ name: string; info: Record<string, unknown> }> {
    return [...this.members].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, info]) => ({ name, info }));
  }

  memberNames(): string[] {
    return [...this.members.keys()].sort();
  }

  onMembersChanged(fn: (members: string[]) => void): void {
    this.memberListeners.push(fn);
  }
  onSessionLost(fn: SessionListener): void {
    this.lostListeners.push(fn);
  }

  /** Takes a lease, publishes the member key, starts keepalives and the members watch. */
  async join(): Promise<void> {
    await this.openSession();
    if (!this.memberWatch) {
      this.memberWatch = this.etcd.watchPrefix(etcdKeys.membersPrefix, {
        onSnapshot: (records) => {
          this.members = new Map(
            records.map((r) => [r.key.slice(etcdKeys.membersPrefix.length), safeJson(r.value)]),
          );
          this.emitMembers();
        },
        onEvent: (ev) => {
          if (ev.type === 'put')
            this.members.set(ev.record.key.slice(etcdKeys.membersPrefix.length), safeJson(ev.record.value));
          else this.members.delete(ev.key.slice(etcdKeys.membersPrefix.length));
          this.emitMembers();
        },
        onError: (err) => this.opts.log.warn('members watch error, resyncing', { error: err.message }),
      });
    }
  }

  private async openSession(): Promise<void> {
    const { node, ttlSeconds, log } = this.opts;
    const key = etcdKeys.member(node);
    const value = JSON.stringify({
      name: node,
      started_at: Math.floor(Date.now() / 1000),
      ...this.opts.info,
    });
    const deadline = Date.now() + (ttlSeconds + DEFAULTS.nameWaitPastTtlSeconds) * 1000;
    for (;;) {
      const sentAt = Date.now();
      const lease = await this.etcd.grantLease(ttlSeconds);
      const res = await this.etcd.createIfAbsent(key, value, lease.id);
      if (res.created) {
        this.renewedAt = Date.now();
        this.lease = lease;
        this.guardUntil = sentAt + ttlSeconds * 1000 - this.opts.guardMarginMs;
        this.sessionLive = true;
        this.opts.previousLeaseId = lease.id;
        this.opts.onLease?.(lease.id);
        log.info('joined cluster', { lease: lease.id });
        this.scheduleKeepalive();
        return;
      }
      await lease.revoke();
      const holder = res.existing;
      if (holder && this.opts.previousLeaseId && holder.lease === this.opts.previousLeaseId) {
        // Our own earlier incarnation (killed, or its session lost): release what it held.
        log.info('revoking the lease of an earlier run of this node', { lease: holder.lease });
        await this.etcd.revokeLeaseId(holder.lease);
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(
          `another backend named "${node}" is a live member of the cluster; give this one another --name`,
        );
      log.warn('member name still held by another session, waiting for it to expire', { node });
      await sleep(DEFAULTS.nameRetryMs);
    }
  }

  private scheduleKeepalive(): void {
    const every = Math.max(
      DEFAULTS.keepaliveMinMs,
      Math.floor((this.opts.ttlSeconds * 1000) / DEFAULTS.keepalivesPerTtl),
    );
    this.keepaliveTimer = setTimeout(() => void this.keepalive(), every);
    this.armGuardTimer();
  }

  private armGuardTimer(): void {
    if (this.guardTimer) clearTimeout(this.guardTimer);
    this.guardTimer = setTimeout(
      () => {
        if (!this.stopped && this.sessionLive && Date.now() >= this.guardUntil)
          this.loseSession('lease guard expired');
      },
      Math.max(0, this.guardUntil - Date.now()) + 1,
    );
  }

  private async keepalive(): Promise<void> {
    const lease = this.lease;
    if (this.stopped || !lease || !this.sessionLive) return;
    const sentAt = Date.now();
    try {
      const ttl = await lease.keepalive(
        Math.max(DEFAULTS.keepaliveTimeoutMinMs, this.guardUntil - Date.now()),
      );
      if (this.lease !== lease || !this.sessionLive) return;
      this.renewedAt = Date.now();
      if (ttl <= 0) {
        this.loseSession('lease expired in etcd');
        return;
      }
      // A keepalive that returns after the guard ran out cannot revive the session: others may
      // already have taken our shards.
      if (Date.now() >= this.guardUntil) {
        this.loseSession('lease guard expired');
        return;
      }
      this.guardUntil = Math.max(this.guardUntil, sentAt + ttl * 1000 - this.opts.guardMarginMs);
    } catch (err) {
      this.opts.log.warn('lease keepalive failed', { error: (err as Error).message });
    }
    if (this.lease === lease && this.sessionLive && !this.stopped) this.scheduleKeepalive();
  }

  private loseSession(reason: string): void {
    if (!this.sessionLive) return;
    this.sessionLive = false;
    if (this.keepaliveTimer) clearTimeout(this.keepaliveTimer);
    if (this.guardTimer) clearTimeout(this.guardTimer);
    this.opts.log.error('cluster session lost; stopping all work and rejoining', { reason });
    for (const fn of this.lostListeners) fn(reason);
    const old = this.lease;
    this.lease = undefined;
    void (async () => {
      // The old lease may still live in etcd (we only lost contact): revoke it so our shards free up.
      await old?.revoke();
      for (let attempt = 0; !this.stopped && !this.retired; attempt++) {
        try {
          await this.openSession();
          this.emitMembers();
          return;
        } catch (err) {
          this.opts.log.warn('rejoin failed, retrying', { error: (err as Error).message });
          await sleep(Math.min(DEFAULTS.rejoinBackoffMaxMs, DEFAULTS.rejoinBackoffMs * 2 ** attempt));
        }
      }
    })();
  }

  private emitMembers(): void {
    const names = this.memberNames();
    for (const fn of this.memberListeners) fn(names);
  }

  /**
   * The first step of a graceful stop: deletes the member key but keeps the lease (and its
   * keepalives), so the others' placement gives them this node's shards while the owner keys,
   * bound to the lease, make them wait for each handoff (docs/architecture.md#shard-ownership-and-handoff).
   */
  async retire(): Promise<void> {
    if (this.retired || this.stopped) return;
    this.retired = true;
    if (this.sessionLive) await this.etcd.delete(etcdKeys.member(this.opts.node));
  }

  /** Leaves the cluster: revoking the lease drops the member key and every owner key at once. */
  async leave(): Promise<void> {
    this.stopped = true;
    this.sessionLive = false;
    if (this.keepaliveTimer) clearTimeout(this.keepaliveTimer);
    if (this.guardTimer) clearTimeout(this.guardTimer);
    await this.memberWatch?.close();
    await this.lease?.revoke();
    this.lease = undefined;
  }
}

function safeJson(s: string): Record<string, unknown> {
  try {
    return JSON.parse(s) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
