import * as v from 'valibot';

/**
 * A job as it travels on the MONITOR_PIPELINE work queue (actors/pipeline/types.ts PipelineJob).
 * Only the backend writes jobs, from events it validated in full at the edge, so the event is
 * checked for the shape the workers rely on, not field by field again.
 */
export const PipelineJobSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  source: v.picklist(['check', 'keepalive', 'registration', 'deregistration', 'resolution', 'ttl', 'metrics']),
  previous_state: v.optional(v.string()),
  event: v.looseObject({
    id: v.optional(v.string()),
    check: v.optional(v.looseObject({ metadata: v.looseObject({ name: v.string() }), handlers: v.optional(v.nullable(v.array(v.string()))) })),
    entity: v.optional(v.looseObject({ metadata: v.looseObject({}) })),
    metrics: v.optional(v.looseObject({})),
    metadata: v.optional(v.looseObject({})),
    pipelines: v.optional(v.nullable(v.array(v.looseObject({})))),
  }),
});
