import type { NatsAdapter } from '../../actors/runtime/nats.ts';
import type { Membership } from '../../actors/runtime/membership.ts';
import type { ShardManager } from '../../actors/runtime/shards.ts';
import type { ReadyReport } from '../api/routes/system.ts';

interface ReadinessDeps {
  membership: () => Membership;
  shards: () => ShardManager;
  nats: () => NatsAdapter;
  /** The configuration copy and the read models have their first complete snapshot. */
  loaded: () => boolean;
  /** Lease TTL in seconds: etcd has "answered recently" when it renewed the lease within half of it. */
  leaseTtlSeconds: number;
}

/**
 * Whether this node should be given traffic (docs/architecture.md#readiness-and-liveness). Probed
 * every second by balancers and the kubelet, so it reads only state the node already tracks: no
 * etcd or NATS round trip per probe.
 */
export class Readiness {
  private stopping = false;

  constructor(private readonly deps: ReadinessDeps) {}

  /** The first step of a graceful stop: from now on the node answers not ready, whatever else holds. */
  drain(): void {
    this.stopping = true;
  }

  check(now = Date.now()): ReadyReport {
    const reasons: string[] = [];
    if (this.stopping) reasons.push('node: stopping');
    try {
      this.checkParts(now, reasons);
    } catch (err) {
      // A part used before it started: the node is still starting (or failed to).
      reasons.push(`node: starting (${(err as Error).message})`);
    }
    return { ready: reasons.length === 0, reasons };
  }

  private checkParts(now: number, reasons: string[]): void {
    const { membership, shards, nats, loaded, leaseTtlSeconds } = this.deps;
    const m = membership();
    if (!m.guardOk()) reasons.push('membership: lease guard expired');
    const age = m.renewalAgeMs(now);
    if (age > (leaseTtlSeconds * 1000) / 2)
      reasons.push(
        Number.isFinite(age)
          ? `etcd: no lease renewal for ${(age / 1000).toFixed(1)}s`
          : 'etcd: lease never renewed',
      );
    const cover = shards().coverage();
    if (!cover.member) reasons.push('membership: not in the member list');
    // Shards coming to a settled node after a member left are being handed over: the old owner
    // serves them meanwhile, and failing every survivor at once would leave a balancer nothing.
    else if (cover.missing > 0 && !cover.settling)
      reasons.push(`shards: ${cover.missing} of ${cover.desired} not held`);
    if (!nats().connected) reasons.push('nats: disconnected');
    if (!loaded()) reasons.push('read model: loading');
  }
}
