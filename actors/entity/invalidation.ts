import { ActorError, type Turn } from '../runtime/types.ts';
import type { EntityState } from './messages.ts';

// A deleted client the legacy API invalidated (`DELETE /clients/:name?invalidate=true`,
// docs/compatibility.md#legacy-api): for a while its keepalives and results are refused, so a late
// one does not register it again. The tombstone is a durable timer of the actor, which outlives the
// entity's state (a record may hold timers only) and ends by itself when it fires.

export const INVALIDATED_TIMER = 'invalidated';

/** Keeps the tombstone for `seconds` from now. */
export function invalidate(t: Turn<EntityState>, seconds: number): void {
  t.setTimer(INVALIDATED_TIMER, t.now + seconds * 1000);
}

/** Refuses (ActorError `invalid`, logged as the reference did) while the tombstone stands. */
export function refuseWhileInvalidated(t: Turn<EntityState>, what: 'keepalive' | 'event'): void {
  const tomb = t.timer(INVALIDATED_TIMER);
  if (!tomb || tomb.at <= t.now) return;
  const i = t.id.indexOf('/');
  t.log.warn('invalid client signature', {
    namespace: t.id.slice(0, i),
    entity: t.id.slice(i + 1),
    refused: what,
    invalidated_until: new Date(tomb.at).toISOString(),
  });
  throw new ActorError('invalid', `entity ${t.id} was invalidated: its ${what} is refused`);
}
