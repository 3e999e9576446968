import { noop } from 'cockatiel';
import { AlarmType, Etcd3, type IMember, type IResponseHeader } from 'etcd3';
import { withTimeout } from '../../lib/timeout.ts';
import type { EtcdAdapter } from './etcd.ts';

// The etcd cluster's own members, as `GET /cluster/members` and `/health` report them
// (docs/compatibility.md#cluster-members-and-member-health). etcd's ids are unsigned 64-bit
// integers; they stay decimal strings here and become JSON numbers only where the answer is written.

const DEFAULTS = {
  /** How long a member's health check may take, unless the caller gives its own. */
  healthTimeoutMs: 2000,
  /** Member list and alarm calls: short, so a /health answer never waits long on a lost cluster. */
  listTimeoutMs: 2000,
} as const;

export interface EtcdMemberList {
  header: IResponseHeader;
  members: IMember[];
}

/** One member's answer to a read, as Sensu's health reports it: an error text, or none. */
export interface MemberHealth {
  member: IMember;
  error?: string;
}

export interface EtcdAlarm {
  memberID: string;
  /** etcd's alarm number: 1 no space, 2 corruption. */
  alarm: number;
}

/** Asks each member directly: a client per member, kept while the member is listed. */
export class EtcdMembers {
  private readonly direct = new Map<string, { urls: string; client: Etcd3 }>();

  constructor(private readonly etcd: EtcdAdapter) {}

  async list(): Promise<EtcdMemberList> {
    const res = await withTimeout(
      this.etcd.client.cluster.memberList({}),
      DEFAULTS.listTimeoutMs,
      'etcd member list',
    );
    return { header: res.header, members: res.members };
  }

  async alarms(): Promise<EtcdAlarm[]> {
    const res = await withTimeout(
      this.etcd.client.maintenance.alarm({ action: 'Get', memberID: '0', alarm: 'None' }),
      DEFAULTS.listTimeoutMs,
      'etcd alarm list',
    );
    return (res.alarms ?? []).map((a) => ({
      memberID: String(a.memberID),
      alarm: Number(AlarmType[a.alarm]),
    }));
  }

  /**
   * A read of the key `health` on each member itself (linearizable, so it needs the member to be in
   * a cluster with a leader), as the reference does; a refused permission still proves the member serves.
   */
  async health(members: IMember[], timeoutMs: number = DEFAULTS.healthTimeoutMs): Promise<MemberHealth[]> {
    this.forgetAllBut(new Set(members.map((m) => m.ID)));
    return Promise.all(
      members.map(async (member) => {
        if (member.clientURLs.length === 0)
          return { member, error: 'member has no client URL (not started)' };
        try {
          await withTimeout(this.clientOf(member).get('health').exec(), timeoutMs, 'etcd member health');
          return { member };
        } catch (err) {
          const message = (err as Error).message;
          if (/permission denied/i.test(message)) return { member };
          return { member, error: message };
        }
      }),
    );
  }

  close(): void {
    this.forgetAllBut(new Set());
  }

  private clientOf(member: IMember): Etcd3 {
    const urls = member.clientURLs.join(',');
    const known = this.direct.get(member.ID);
    if (known?.urls === urls) return known.client;
    known?.client.close();
    const { auth, tls } = this.etcd.opts;
    // No retries and no other member: the answer must be this member's own.
    const client = new Etcd3({
      hosts: member.clientURLs,
      dialTimeout: DEFAULTS.healthTimeoutMs,
      faultHandling: { global: noop, host: () => noop },
      ...(auth ? { auth } : {}),
      ...(tls
        ? { credentials: { rootCertificate: tls.ca as Buffer, privateKey: tls.key, certChain: tls.cert } }
        : {}),
    });
    this.direct.set(member.ID, { urls, client });
    return client;
  }

  private forgetAllBut(ids: Set<string>): void {
    for (const [id, { client }] of this.direct) {
      if (ids.has(id)) continue;
      client.close();
      this.direct.delete(id);
    }
  }
}
