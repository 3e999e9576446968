import type { IResponseHeader } from 'etcd3';
import type { EtcdAlarm, EtcdMemberList, MemberHealth } from '../../actors/runtime/etcd-members.ts';

// The etcd cluster as Sensu's tools read it: the member list of `GET /cluster/members` and the
// `Alarms`, `ClusterHealth` and `Header` of `/health`, field names as etcd's and Sensu's JSON spell
// them (docs/compatibility.md#cluster-members-and-member-health).

/** An unsigned 64-bit integer of etcd (decimal), written as a JSON number by `uint64Json`. */
interface Uint64 {
  readonly uint64: string;
}
const u64 = (decimal: string | number | undefined): Uint64 => ({ uint64: String(decimal ?? '0') });
const isUint64 = (v: unknown): v is Uint64 =>
  typeof v === 'object' && v !== null && typeof (v as { uint64?: unknown }).uint64 === 'string';

const MARK = '\u0000u64:';

/**
 * JSON with etcd's ids as numbers, as Go writes them: they pass 2^53, so they cannot go through a
 * JavaScript number. JavaScript clients should read `MemberIDHex` (or the digits) instead.
 */
export function uint64Json(value: unknown): string {
  const text = JSON.stringify(value, (_k, v: unknown) => (isUint64(v) ? MARK + v.uint64 : v));
  return text.replace(/"\\u0000u64:(\d+)"/g, '$1');
}

/** etcd's response header; zero fields are left out, as Go's `omitempty` does. */
function header(h: IResponseHeader): Record<string, Uint64> {
  const out: Record<string, Uint64> = {};
  for (const k of ['cluster_id', 'member_id', 'revision', 'raft_term'] as const)
    if (h[k] !== undefined && String(h[k]) !== '0') out[k] = u64(h[k]);
  return out;
}

/** `GET /cluster/members`: `{header, members: [{ID, name, peerURLs, clientURLs, isLearner?}]}`. */
export function memberListBody(list: EtcdMemberList): unknown {
  return {
    header: header(list.header),
    members: list.members.map((m) => ({
      ID: u64(m.ID),
      ...(m.name ? { name: m.name } : {}),
      ...(m.peerURLs.length ? { peerURLs: m.peerURLs } : {}),
      ...(m.clientURLs.length ? { clientURLs: m.clientURLs } : {}),
      ...(m.isLearner ? { isLearner: true } : {}),
    })),
  };
}

/** The reference's part of the `/health` body; all null when the member list could not be read. */
export interface EtcdHealthFields {
  Alarms: Array<{ memberID: Uint64; alarm: number }> | null;
  ClusterHealth: Array<{
    MemberID: Uint64;
    MemberIDHex: string;
    Name: string;
    Err: string;
    Healthy: boolean;
  }> | null;
  Header: Record<string, Uint64> | null;
}

export function etcdHealthFields(
  list: EtcdMemberList | undefined,
  health: MemberHealth[],
  alarms: EtcdAlarm[],
): EtcdHealthFields {
  if (!list) return { Alarms: null, ClusterHealth: null, Header: null };
  return {
    Alarms: alarms.length ? alarms.map((a) => ({ memberID: u64(a.memberID), alarm: a.alarm })) : null,
    ClusterHealth: health.map(({ member, error }) => ({
      MemberID: u64(member.ID),
      MemberIDHex: BigInt(member.ID).toString(16),
      Name: member.name,
      Err: error ?? '',
      Healthy: error === undefined,
    })),
    Header: header(list.header),
  };
}
