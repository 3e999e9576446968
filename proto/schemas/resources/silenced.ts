import * as v from 'valibot';
import { Meta } from './meta.ts';

/** Silenced entries are named `<subscription|*>:<check|*>`: the one name that may hold `*`. */
const SilencedMeta = v.object({
  ...Meta.entries,
  name: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[\w.\-:*]+$/, 'may only contain letters, digits, "_", ".", "-", ":" and "*"'),
    ),
  ),
});

/** core/v2 Silenced. The name is `<subscription|*>:<check|*>`, derived when absent. */
export const Silenced = v.pipe(
  v.object({
    metadata: SilencedMeta,
    subscription: v.optional(v.string()),
    check: v.optional(v.string()),
    // Whole seconds, as the reference's int64 fields.
    expire: v.optional(v.pipe(v.number(), v.integer('must be a whole number of seconds'))),
    expire_on_resolve: v.optional(v.boolean()),
    creator: v.optional(v.string()),
    reason: v.optional(v.string()),
    begin: v.optional(v.pipe(v.number(), v.integer('must be a whole number of seconds'))),
    expire_at: v.optional(v.number()),
  }),
  v.check((s) => !!(s.subscription || s.check), 'one of check or subscription is required'),
);

/** A stored silenced entry, as the configuration holds it and the per-event match reads it. */
export type SilencedEntry = v.InferOutput<typeof Silenced>;

export const silencedName = (s: { subscription?: string; check?: string }) =>
  `${s.subscription || '*'}:${s.check || '*'}`;
