import type { SilencedEntry } from '../../proto/schemas/resources/silenced.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { Entity } from '../../proto/schemas/entity.ts';

const wild = (s: string | undefined) => !s || s === '*';

/**
 * Names of the entries that silence `event` (docs/compatibility.md#silencing). Runs for every event, so it
 * builds no subscription set: membership is checked against the entity's and the check's arrays directly.
 */
export function silencedBy(
  entries: readonly SilencedEntry[],
  event: Event,
  entity: Entity | undefined,
  nowSec: number,
): string[] {
  const out: string[] = [];
  const check = event.check;
  const checkName = check?.metadata?.name;
  const entityName = entity?.metadata?.name ?? event.entity?.metadata?.name;
  const entitySubs = entity?.subscriptions ?? event.entity?.subscriptions ?? [];
  const checkSubs = check?.subscriptions ?? [];
  // A proxy event's check targets other entities' subscriptions: only the entity's own count.
  const proxy = !!check?.proxy_entity_name;
  for (const s of entries) {
    if (s.expire_at !== undefined && s.expire_at > 0 && s.expire_at <= nowSec) continue;
    if (s.begin !== undefined && s.begin > nowSec) continue;
    if (!wild(s.check) && s.check !== checkName) continue;
    if (!wild(s.subscription) && !subscribed(s.subscription!, entityName, entitySubs, checkSubs, proxy))
      continue;
    out.push(s.metadata.name ?? `${s.subscription || '*'}:${s.check || '*'}`);
  }
  return out;
}

function subscribed(
  sub: string,
  entityName: string | undefined,
  entitySubs: readonly string[],
  checkSubs: readonly string[],
  proxy: boolean,
): boolean {
  if (
    entityName !== undefined &&
    sub.length === entityName.length + 7 &&
    sub.startsWith('entity:') &&
    sub.endsWith(entityName)
  )
    return true;
  if (!entitySubs.includes(sub)) return false;
  return proxy || checkSubs.includes(sub);
}

/** Of the matched `names`, those whose entry is deleted once the event resolves. */
export function toDeleteOnResolve(entries: readonly SilencedEntry[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (const s of entries) {
    const name = s.metadata.name ?? `${s.subscription || '*'}:${s.check || '*'}`;
    if (s.expire_on_resolve && names.includes(name)) out.push(name);
  }
  return out;
}
