import * as v from 'valibot';
import { Event } from './event.ts';

/** A job as it travels on the MONITOR_PIPELINE work queue (actors/pipeline/types.ts PipelineJob). */
export const PipelineJobSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  source: v.picklist(['check', 'keepalive', 'registration', 'deregistration', 'resolution', 'ttl', 'metrics']),
  previous_state: v.optional(v.string()),
  event: Event,
});
