import { buckets, eventKey } from '../../proto/names.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import { KEEPALIVE_CHECK, type Check, type Event } from '../../proto/schemas/event.ts';
import type { Turn } from '../runtime/types.ts';
import { mergeCheck } from './check-state.ts';
import { derivedEventId } from './keepalive.ts';
import type { EntityState } from './messages.ts';

// Check TTL, the dead man's switch of one (entity, check): if no new result arrives within `ttl`
// seconds of the last one, the backend writes a failure result itself.
//
// Why a durable timer `ttl:<check>` inside the entity actor rather than a separate `ttl` actor (as
// the first plan listed; docs/architecture.md#check-ttl): expiring needs the entity's stored event (its
// history takes the failure) and its keepalive state (a failing keepalive suppresses the TTL), both owned by
// the entity actor. A timer in that actor has the same guarantees (one owner, survives node death: the
// runtime re-arms durable timers on takeover) with no cross-actor messages, no second record to keep
// consistent, and arming and the event write committed in one turn.

export const TTL_TIMER_PREFIX = 'ttl:';
const ttlTimer = (check: string) => `${TTL_TIMER_PREFIX}${check}`;
const ttlOutput = (secondsAgo: number) => `Last check execution was ${secondsAgo} seconds ago`;

const sec = (ms: number) => Math.floor(ms / 1000);
/** The status of the failure result: the check's `ttl_status` (a legacy field) when it is one, else 1. */
const ttlStatusOf = (check: Check): number => {
  const s = (check as { ttl_status?: unknown }).ttl_status;
  return typeof s === 'number' && Number.isInteger(s) && s >= 0 ? s : 1;
};
const ttlOf = (check: Check | undefined): number =>
  typeof check?.ttl === 'number' && check.ttl > 0 ? check.ttl : 0;

/**
 * After a result of `check` was stored: a ttl arms (or re-arms) the switch at now + ttl; no ttl (or 0)
 * disarms it. The keepalive carries its own deadline and never has a TTL switch.
 */
export function armTtl(t: Turn<EntityState>, check: Check): void {
  const name = check.metadata.name;
  if (!name || name === KEEPALIVE_CHECK) return;
  const ttl = ttlOf(check);
  if (ttl > 0) t.setTimer(ttlTimer(name), t.now + ttl * 1000);
  else t.clearTimer(ttlTimer(name));
}

/** Disarms the switches of the given checks (the event or the whole entity was deleted). */
export function disarmTtl(t: Turn<EntityState>, checks: readonly string[]): void {
  for (const c of checks) t.clearTimer(ttlTimer(c));
}

/**
 * The switch of `check` expired. Without a stored event or an entity (deleted meanwhile), or when the
 * stored check no longer has a ttl, nothing happens and the switch stays off. While the entity's
 * keepalive is failing the expiry is suppressed (the entity is down; its keepalive alert says so) but,
 * unlike the reference which buries the switch
 * (docs/compatibility.md#a-check-ttl-outlives-a-keepalive-failure), it is re-armed for another ttl: a check
 * that stays silent after its agent came back is still reported. Otherwise the failure result is returned,
 * merged into the history like any result, for the actor to store and hand to the pipeline; the switch is
 * re-armed, so it repeats every ttl.
 */
interface TtlFailure {
  key: string;
  id: string;
  entity: Entity;
  check: Check;
  previous: Event;
  rest: Omit<Event, 'entity' | 'check'>;
}

export async function expireTtl(
  t: Turn<EntityState>,
  timer: string,
  at: number,
): Promise<TtlFailure | undefined> {
  const st = t.state;
  const checkName = timer.slice(TTL_TIMER_PREFIX.length);
  if (!st) return undefined;
  const ns = st.entity.metadata.namespace ?? 'default';
  const name = st.entity.metadata.name ?? '';
  const key = eventKey(ns, name, checkName);
  const stored = await t.read<Event>(buckets.events, key);
  const ttl = ttlOf(stored?.check);
  if (!stored?.check || ttl === 0) return undefined;
  t.setTimer(timer, t.now + ttl * 1000);

  const ka = await t.read<Event>(buckets.events, eventKey(ns, name, KEEPALIVE_CHECK));
  if ((ka?.check?.status ?? 0) > 0) {
    t.log.info('check ttl expired while the keepalive is failing: suppressed', {
      namespace: ns,
      entity: name,
      check: checkName,
    });
    return undefined;
  }
  // Derived from the deadline: if this timer fires again after a failover, the event is already there.
  const id = derivedEventId(ns, name, checkName, 'ttl', at);
  if (stored.id === id) return undefined;
  const nowSec = sec(t.now);
  // As the reference: seconds since the stored result's execution (after a first expiry, since that
  // failure result, so a repeat reports about one ttl).
  const agoSec = Math.max(0, nowSec - (stored.check.executed ?? nowSec));
  const check = mergeCheck(
    stored.check,
    {
      ...stored.check,
      status: ttlStatusOf(stored.check),
      state: 'failing',
      output: ttlOutput(agoSec),
      executed: nowSec,
    },
    st.entity.legacy !== undefined,
  );
  // late_ms: how long after its deadline the expiry ran (bench/ttl.ts reads it).
  t.log.warn('check ttl expired', {
    namespace: ns,
    entity: name,
    check: checkName,
    ttl,
    last_execution_s_ago: agoSec,
    late_ms: t.now - at,
  });
  const { entity: _e, check: _c, ...rest } = stored;
  return { key, id, entity: st.entity, check, previous: stored, rest: { ...rest, timestamp: nowSec } };
}
