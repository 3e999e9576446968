import { redactEventEntity } from '../../lib/redact.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { EventExtras } from './types.ts';
import { isResolution } from '../entity/check-state.ts';

/**
 * The extras filters see (docs/compatibility.md#filters), plus flapping start and end, which the reference
 * never fires: `previousState` is the check's state before this event. The event's history already holds this
 * result as its last entry, so the previous result is the one before it.
 */
export function eventExtras(event: Event, previousState?: string): EventExtras {
  const check = event.check;
  const status = check?.status ?? 0;
  const state = check?.state;
  return {
    has_check: !!check,
    has_metrics: !!event.metrics,
    is_incident: !!check && status !== 0,
    is_resolution: isResolution(check),
    is_silenced: !!check?.is_silenced,
    is_flapping_start: !!check && state === 'flapping' && previousState !== 'flapping',
    is_flapping_end: !!check && previousState === 'flapping' && state !== 'flapping',
  };
}

/** What a filter expression sees as `event`: the event, its entity redacted, with the extras as top-level fields. */
export function filterView(event: Event, extras: EventExtras): Record<string, unknown> {
  return { ...redactEventEntity(event), ...extras };
}
