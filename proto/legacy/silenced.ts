import * as v from 'valibot';
import { toLegacySilencedId, toLegacySubscription } from './subscriptions.ts';

// The legacy API's silenced entries are the current generation's (docs/compatibility.md#legacy-api):
// the same stored entries, taken with the legacy generation's rules and shown its way.

const SUBSCRIPTION = /^[\w.\-:]+$/;
const CHECK = /^[\w.-]+$/;
const Integer = v.pipe(v.number(), v.integer());

/** `POST /silenced`: at least a subscription or a check; `*` is no subscription name. */
export const SilenceRules = v.pipe(
  v.object({
    subscription: v.optional(v.pipe(v.string(), v.regex(SUBSCRIPTION))),
    check: v.optional(v.pipe(v.string(), v.regex(CHECK))),
    begin: v.optional(Integer),
    expire: v.optional(Integer),
    reason: v.optional(v.string()),
    creator: v.optional(v.string()),
    expire_on_resolve: v.optional(v.boolean()),
  }),
  v.check((s) => s.subscription !== undefined || s.check !== undefined),
);

/** `POST /silenced/clear`: an id, or a subscription and a check (each `*` when absent). */
export const ClearRules = v.object({
  id: v.optional(v.string()),
  subscription: v.optional(v.pipe(v.string(), v.regex(SUBSCRIPTION))),
  check: v.optional(v.pipe(v.string(), v.regex(CHECK))),
});

/** A stored silenced entry, as the view reads it. */
export interface StoredSilenced {
  metadata?: { name?: string; [k: string]: unknown };
  subscription?: string;
  check?: string;
  reason?: string;
  creator?: string;
  begin?: number;
  expire?: number;
  expire_at?: number;
  expire_on_resolve?: boolean;
}

/**
 * An entry as the legacy API showed one: its id and subscription the legacy way, absent fields
 * null, `timestamp` its begin (when it took effect), and `expire` the seconds it has left (-1: none).
 */
export function toLegacySilenced(s: StoredSilenced, nowSec: number) {
  const at = s.expire_at ?? 0;
  return {
    id: toLegacySilencedId(s.metadata?.name ?? `${s.subscription || '*'}:${s.check || '*'}`),
    subscription: s.subscription ? toLegacySubscription(s.subscription) : null,
    check: s.check || null,
    reason: s.reason || null,
    creator: s.creator || null,
    begin: s.begin ?? null,
    expire_on_resolve: s.expire_on_resolve ?? false,
    timestamp: s.begin ?? null,
    expire: at > 0 ? Math.max(0, Math.ceil(at - nowSec)) : -1,
  };
}
