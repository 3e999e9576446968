import * as v from 'valibot';
import { Meta } from './meta.ts';

/** core/v2 Silenced. The name is `<subscription|*>:<check|*>`, derived when absent. */
export const Silenced = v.pipe(
  v.object({
    metadata: Meta,
    subscription: v.optional(v.string()),
    check: v.optional(v.string()),
    expire: v.optional(v.number()),
    expire_on_resolve: v.optional(v.boolean()),
    creator: v.optional(v.string()),
    reason: v.optional(v.string()),
    begin: v.optional(v.number()),
    expire_at: v.optional(v.number()),
  }),
  v.check((s) => !!(s.subscription || s.check), 'a silenced entry needs a subscription or a check'),
);

export const silencedName = (s: { subscription?: string; check?: string }) => `${s.subscription || '*'}:${s.check || '*'}`;
