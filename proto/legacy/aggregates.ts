import { aggregatesOf } from './checks.ts';

// The legacy API's aggregates (docs/compatibility.md#legacy-api): groups of check results named by
// the checks' `aggregate`/`aggregates`, counted by severity. Nothing is stored for them: the members
// are worked out from the stored events, less those a deletion left behind.

/** One check result of an aggregate: the latest result of a check on a client. */
export interface AggregateMember {
  client: string;
  check: string;
  status: number;
  output: string;
  executed: number;
}

/** A stored event as the index reads it. */
export interface MemberSource {
  entity: string;
  check: string;
  result: {
    aggregate?: unknown;
    aggregates?: unknown;
    status?: unknown;
    output?: unknown;
    executed?: unknown;
  };
}

export const SEVERITIES = ['ok', 'warning', 'critical', 'unknown'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The legacy severity of an exit status: 0-2 by name, anything else unknown. */
export const severityOf = (status: number): Severity =>
  status >= 0 && status <= 2 ? SEVERITIES[status]! : 'unknown';

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);

/**
 * Every aggregate's members. A result names its aggregates itself, or, when it names none, through
 * the definition of its check (`defined`: aggregates by check name), as the legacy server merged the
 * definition under a result. `deletedAt`: per aggregate, the epoch second it was deleted; results
 * executed up to that second are no longer members (a later result makes its check one again).
 */
export function aggregateIndex(
  events: Iterable<MemberSource>,
  defined: ReadonlyMap<string, string[]>,
  deletedAt: ReadonlyMap<string, number>,
): Map<string, AggregateMember[]> {
  const index = new Map<string, AggregateMember[]>();
  for (const e of events) {
    const own = aggregatesOf(e.result, e.check);
    const names = own.length ? own : (defined.get(e.check) ?? []);
    if (!names.length) continue;
    const member: AggregateMember = {
      client: e.entity,
      check: e.check,
      status: num(e.result.status),
      output: typeof e.result.output === 'string' ? e.result.output : '',
      executed: num(e.result.executed),
    };
    for (const name of names) {
      const cut = deletedAt.get(name);
      if (cut !== undefined && member.executed <= cut) continue;
      let list = index.get(name);
      if (!list) index.set(name, (list = []));
      list.push(member);
    }
  }
  return index;
}

/**
 * `GET /aggregates/:name`: distinct clients and checks, and the results by severity. With `maxAge`
 * (seconds), results executed before now - maxAge are counted `stale` and in no other count.
 */
export function aggregateSummary(members: readonly AggregateMember[], nowSec: number, maxAge?: number) {
  const results = { ok: 0, warning: 0, critical: 0, unknown: 0, total: 0, stale: 0 };
  const since = maxAge === undefined ? undefined : nowSec - maxAge;
  for (const m of members) {
    if (since !== undefined && m.executed < since) {
      results.stale++;
      continue;
    }
    results.total++;
    results[severityOf(m.status)]++;
  }
  return {
    clients: new Set(members.map((m) => m.client)).size,
    checks: new Set(members.map((m) => m.check)).size,
    results,
  };
}

/** Values grouped under a key, in first-seen order. */
function grouped(pairs: Iterable<[string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, x] of pairs) {
    const list = out.get(k);
    if (!list) out.set(k, [x]);
    else if (!list.includes(x)) list.push(x);
  }
  return out;
}

/** `GET /aggregates/:name/clients`: each client with the checks it has a member result of. */
export const aggregateClients = (members: readonly AggregateMember[]) =>
  [...grouped(members.map((m) => [m.client, m.check]))].map(([name, checks]) => ({ name, checks }));

/** `GET /aggregates/:name/checks`: each check with the clients it has a member result on. */
export const aggregateChecks = (members: readonly AggregateMember[]) =>
  [...grouped(members.map((m) => [m.check, m.client]))].map(([name, clients]) => ({ name, clients }));

/** `GET /aggregates/:name/results/:severity`: the results of one severity by check, then by output. */
export function aggregateResults(members: readonly AggregateMember[], severity: Severity) {
  const byCheck = new Map<string, Map<string, string[]>>();
  for (const m of members) {
    if (severityOf(m.status) !== severity) continue;
    let outputs = byCheck.get(m.check);
    if (!outputs) byCheck.set(m.check, (outputs = new Map()));
    const clients = outputs.get(m.output);
    if (clients) clients.push(m.client);
    else outputs.set(m.output, [m.client]);
  }
  return [...byCheck].map(([check, outputs]) => ({
    check,
    summary: [...outputs].map(([output, clients]) => ({ output, total: clients.length, clients })),
  }));
}
