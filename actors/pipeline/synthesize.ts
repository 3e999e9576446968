// STUB by the lead so the backend starts while the filters helper builds the real module (overwrite freely).
import type { Event } from '../../proto/schemas/event.ts';
import type { EventExtras } from './types.ts';
export function eventExtras(event: Event, previousState?: string): EventExtras {
  const status = event.check?.status ?? 0;
  return { has_check: !!event.check, has_metrics: !!event.metrics, is_incident: !!event.check && status !== 0, is_resolution: false, is_silenced: !!event.check?.is_silenced, is_flapping_start: event.check?.state === 'flapping' && previousState !== 'flapping', is_flapping_end: previousState === 'flapping' && event.check?.state !== 'flapping' };
}
