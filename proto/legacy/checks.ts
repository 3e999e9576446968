import * as v from 'valibot';
import { fromLegacySubscription, toLegacySubscription } from './subscriptions.ts';

// A legacy check is a check configuration of the legacy API's namespace, shown as the legacy
// generation defined checks (docs/compatibility.md#legacy-api): its fields under their legacy names,
// nothing stored twice.

/** The check configuration fields the view reads (the stored core/v2 CheckConfig). */
export interface StoredCheck {
  metadata?: { name?: string; [k: string]: unknown };
  command?: string;
  subscriptions?: string[] | null;
  round_robin?: boolean;
  interval?: number;
  cron?: string;
  handlers?: string[] | null;
  timeout?: number;
  ttl?: number;
  publish?: boolean;
  stdin?: boolean;
  low_flap_threshold?: number;
  high_flap_threshold?: number;
  proxy_entity_name?: string;
  proxy_requests?: { entity_attributes?: string[] | null; splay?: boolean; splay_coverage?: number } | null;
  aggregate?: boolean | string;
  aggregates?: string[] | null;
  [k: string]: unknown;
}

const ROUND_ROBIN = 'roundrobin:';

/**
 * A subscription of a check as the legacy API shows it: the legacy generation marked a round-robin
 * subscription in its name (`roundrobin:<sub>`), the current one on the check (`round_robin`).
 */
function subscriber(sub: string, roundRobin: boolean): string {
  const shown = toLegacySubscription(sub);
  return roundRobin && !shown.startsWith(ROUND_ROBIN) ? ROUND_ROBIN + shown : shown;
}

/** The check as the legacy API shows it: its definition plus `name`; absent fields are left out. */
export function toLegacyCheck(c: StoredCheck): Record<string, unknown> {
  const rr = c.round_robin === true;
  const out: Record<string, unknown> = {
    name: c.metadata?.name,
    command: c.command,
    subscribers: [...new Set((c.subscriptions ?? []).map((s) => subscriber(s, rr)))],
  };
  if (c.cron) out.cron = c.cron;
  else if (c.interval !== undefined) out.interval = c.interval;
  if (c.handlers?.length) out.handlers = c.handlers;
  const copied = [
    'timeout',
    'ttl',
    'publish',
    'stdin',
    'low_flap_threshold',
    'high_flap_threshold',
    'aggregate',
  ] as const;
  for (const k of copied) if (c[k] !== undefined && c[k] !== 0) out[k] = c[k];
  if (c.aggregates?.length) out.aggregates = c.aggregates;
  if (c.proxy_entity_name) out.source = c.proxy_entity_name;
  // The current generation selects proxy entities with expressions, not the legacy attribute hash:
  // shown under the legacy key with their current fields.
  if (c.proxy_requests) out.proxy_requests = c.proxy_requests;
  return out;
}

/** The aggregates a check's result belongs to: `aggregate` (true: the check's own name) and `aggregates`. */
export function aggregatesOf(
  check: { aggregate?: unknown; aggregates?: unknown },
  checkName: string,
): string[] {
  const out = new Set<string>();
  if (check.aggregate === true) out.add(checkName);
  else if (typeof check.aggregate === 'string' && check.aggregate) out.add(check.aggregate);
  if (Array.isArray(check.aggregates))
    for (const a of check.aggregates) if (typeof a === 'string' && a) out.add(a);
  return [...out];
}

/** `POST /request`: the legacy generation's rules. */
export const RequestRules = v.object({
  check: v.string(),
  subscribers: v.optional(v.array(v.string())),
  reason: v.optional(v.string()),
  creator: v.optional(v.string()),
});

/**
 * A requested subscriber as the scheduler takes it: `client:<name>` is the entity's own subscription;
 * `roundrobin:<sub>` is the subscription itself (whether one agent or all run the request is the
 * check's `round_robin`, as for a scheduled request).
 */
export function requestSubscription(sub: string): string {
  const s = fromLegacySubscription(sub);
  return s.startsWith(ROUND_ROBIN) ? s.slice(ROUND_ROBIN.length) : s;
}
