import * as v from 'valibot';
import { CheckStatus, ObjectMeta, Seconds, UInt } from './common.ts';
import { Entity } from './entity.ts';

export const HistoryEntry = v.object({ status: CheckStatus, executed: UInt });
export type HistoryEntry = v.InferOutput<typeof HistoryEntry>;

/**
 * core/v2 Check as carried by an event. Loose: the check configuration has many more fields (later
 * issues validate them with the check resource schema) and they travel through unchanged.
 */
export const Check = v.looseObject({
  metadata: ObjectMeta,
  command: v.optional(v.string()),
  handlers: v.optional(v.nullable(v.array(v.string()))),
  interval: v.optional(UInt),
  timeout: v.optional(UInt),
  // The dead man's switch (actors/entity/ttl.ts): 0 or less is off; as the reference, at least 5 s.
  ttl: v.optional(
    v.pipe(
      v.number(),
      v.check((t) => t <= 0 || t >= 5, 'check ttl must be 0 (off) or at least 5 seconds'),
    ),
  ),
  subscriptions: v.optional(v.nullable(v.array(v.string()))),
  status: v.optional(CheckStatus),
  output: v.optional(v.string()),
  issued: v.optional(UInt),
  executed: v.optional(UInt),
  duration: v.optional(Seconds),
  history: v.optional(v.nullable(v.array(HistoryEntry))),
  occurrences: v.optional(UInt),
  occurrences_watermark: v.optional(UInt),
  state: v.optional(v.string()),
  total_state_change: v.optional(UInt),
  last_ok: v.optional(UInt),
  is_silenced: v.optional(v.boolean()),
  silenced: v.optional(v.nullable(v.array(v.string()))),
  low_flap_threshold: v.optional(UInt),
  high_flap_threshold: v.optional(UInt),
  scheduler: v.optional(v.string()),
  processed_by: v.optional(v.string()),
});
export type Check = v.InferOutput<typeof Check>;

/** core/v2 Event. `id` is a UUID string; the backend acknowledges agent events by it. */
export const Event = v.object({
  timestamp: v.optional(UInt),
  id: v.optional(v.string()),
  sequence: v.optional(UInt),
  entity: v.optional(Entity),
  check: v.optional(Check),
  metrics: v.optional(v.looseObject({})),
  metadata: v.optional(ObjectMeta),
  pipelines: v.optional(v.nullable(v.array(v.looseObject({})))),
  /**
   * A legacy client's `signature` (docs/compatibility.md#legacy-client), sent with its keepalives and
   * results; the entity actor checks it and never stores it.
   */
  signature: v.optional(v.string()),
});
export type Event = v.InferOutput<typeof Event>;

/** A keepalive is an ordinary event whose check has this name; the agent sends it and the backend judges silence by it. */
export const KEEPALIVE_CHECK = 'keepalive';

/** A keepalive must name its entity and carry the keepalive check with its timeouts. */
export const KeepaliveEvent = v.object({
  ...Event.entries,
  entity: Entity,
  check: v.looseObject({
    ...Check.entries,
    interval: v.pipe(UInt, v.minValue(1, 'keepalive interval must be at least 1 second')),
    timeout: v.pipe(UInt, v.minValue(5, 'keepalive warning timeout must be at least 5 seconds')),
    ttl: v.optional(UInt),
  }),
});
export type KeepaliveEvent = v.InferOutput<typeof KeepaliveEvent>;
