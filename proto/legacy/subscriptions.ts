// The legacy generation named a client's own subscription `client:<name>`; the current one names an
// entity's `entity:<name>`. The stores keep the current form; the legacy API shows and accepts the
// legacy one (docs/compatibility.md#legacy-api), so a silence of `client:web-01` made through the
// legacy API is the silence of `entity:web-01` the REST API lists, and the other way round.

const LEGACY = 'client:';
const CURRENT = 'entity:';

/** A subscription (or a silenced entry's subscription) as the legacy API shows it. */
export const toLegacySubscription = (s: string): string =>
  s.startsWith(CURRENT) ? LEGACY + s.slice(CURRENT.length) : s;

/** A subscription the legacy API was given, as the stores keep it. */
export const fromLegacySubscription = (s: string): string =>
  s.startsWith(LEGACY) ? CURRENT + s.slice(LEGACY.length) : s;

/**
 * The subscription a legacy `roundrobin:<x>` (or `direct:<x>`) entry stands for, or undefined for a
 * plain one: such an entry means only the round-robin group of `<x>`, never its fan-out
 * (docs/compatibility.md#round-robin), for a client's subscriptions and a check's alike.
 */
export function roundRobinOnly(subscription: string): string | undefined {
  const m = /^(?:roundrobin|direct):(.+)$/.exec(subscription);
  return m ? m[1] : undefined;
}

/** A list shown the legacy way, without duplicates, in its order. */
export const toLegacySubscriptions = (subs: readonly string[] | null | undefined): string[] => [
  ...new Set((subs ?? []).map(toLegacySubscription)),
];

/** A silenced entry's id `<subscription|*>:<check|*>` the legacy way (its subscription mapped). */
export function toLegacySilencedId(id: string): string {
  return id.startsWith(CURRENT) ? LEGACY + id.slice(CURRENT.length) : id;
}
