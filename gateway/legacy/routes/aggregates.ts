import type { Context } from 'hono';
import { SEP } from '../../../actors/entity/read-model.ts';
import { configKeys } from '../../../proto/names.ts';
import { aggregatesOf } from '../../../proto/legacy/checks.ts';
import {
  aggregateChecks,
  aggregateClients,
  aggregateIndex,
  aggregateResults,
  aggregateSummary,
  SEVERITIES,
  type AggregateMember,
  type MemberSource,
  type Severity,
} from '../../../proto/legacy/aggregates.ts';
import type { LegacyEnv, LegacyServices } from '../env.ts';
import { LegacyError, empty, json, listed } from '../http.ts';
import { NAME, route, type LegacyRoute } from '../router.ts';
import { storedChecks } from './checks.ts';

// An aggregate's deletion is a tombstone in the configuration (etcd), which every node's watched
// copy holds: `{deleted_at}`, the epoch second of the deletion. Members whose result is older drop
// out, and a newer result makes its check a member again, as the legacy generation's did.
const TOMBSTONES = 'legacy-aggregates';

interface Tombstone {
  deleted_at: number;
}

const DIGITS = /^[0-9]+$/;
const nowSec = () => Math.floor(Date.now() / 1000);

/** The stored events of the namespace, as the aggregate index reads them. */
function* memberSources(svc: LegacyServices): Generator<MemberSource> {
  for (const item of svc.readModel.events.range(svc.namespace + SEP)) {
    const [, entity, check] = item.key.split(SEP);
    const result = item.value<{ check?: MemberSource['result'] }>().check;
    if (entity !== undefined && check !== undefined && result) yield { entity, check, result };
  }
}

/** Every aggregate with at least one member, from the events, the check definitions, the tombstones. */
function index(svc: LegacyServices): Map<string, AggregateMember[]> {
  const defined = new Map<string, string[]>();
  for (const check of storedChecks(svc)) {
    const name = check.metadata?.name;
    const names = name ? aggregatesOf(check, name) : [];
    if (name && names.length) defined.set(name, names);
  }
  const deletedAt = new Map<string, number>();
  for (const e of svc.config.entries<Tombstone>(configKeys.prefix(TOMBSTONES, svc.namespace)))
    deletedAt.set(e.key.slice(e.key.lastIndexOf('/') + 1), e.value.deleted_at);
  return aggregateIndex(memberSources(svc), defined, deletedAt);
}

/** The members of aggregate `name`; 404 when it has none. */
function members(svc: LegacyServices, name: string): AggregateMember[] {
  const list = index(svc).get(name);
  if (!list?.length) throw new LegacyError(404);
  return list;
}

/** `max_age` in seconds (digits only, anything else ignored). */
function maxAge(c: Context<LegacyEnv>): number | undefined {
  const raw = c.req.query('max_age');
  return raw !== undefined && DIGITS.test(raw) ? Number(raw) : undefined;
}

/** `/aggregates`: the legacy generation's groups of check results, counted from the stored events. */
export function aggregateRoutes(svc: LegacyServices): LegacyRoute[] {
  return [
    route('GET', '/aggregates', (c) =>
      json(
        c,
        200,
        listed(
          c,
          [...index(svc).keys()].sort().map((name) => ({ name })),
        ),
      ),
    ),
    route('GET', `/aggregates/${NAME}`, (c, [name]) =>
      json(c, 200, aggregateSummary(members(svc, name!), nowSec(), maxAge(c))),
    ),
    route('DELETE', `/aggregates/${NAME}`, async (c, [name]) => {
      members(svc, name!);
      const tombstone: Tombstone = { deleted_at: nowSec() };
      await svc.config.put(configKeys.namespaced(TOMBSTONES, svc.namespace, name!), tombstone);
      return empty(c, 204);
    }),
    route('GET', `/aggregates/${NAME}/clients`, (c, [name]) =>
      json(c, 200, aggregateClients(members(svc, name!))),
    ),
    route('GET', `/aggregates/${NAME}/checks`, (c, [name]) =>
      json(c, 200, aggregateChecks(members(svc, name!))),
    ),
    route('GET', `/aggregates/${NAME}/results/${NAME}`, (c, [name, severity]) => {
      if (!(SEVERITIES as readonly string[]).includes(severity!)) throw new LegacyError(400);
      return json(c, 200, aggregateResults(members(svc, name!), severity as Severity));
    }),
  ];
}
