import * as v from 'valibot';
import type { Event } from './schemas/event.ts';

// The job on the MONITOR_PIPELINE work queue: the one place that knows its layout. The backend
// writes it (entity actors, and the metrics path for events never stored) with encodeJob, and the
// pipeline workers read it with decodeJob.

const JOB_SOURCES = [
  'check',
  'keepalive',
  'registration',
  'deregistration',
  'resolution',
  'ttl',
  'metrics',
] as const;

/** Why the backend put an event on the queue (for logs and for handlers that care). */
export type JobSource = (typeof JOB_SOURCES)[number];

/** A job on the pipeline work queue. */
export interface PipelineJob {
  /** Unique per job: JetStream drops a re-published duplicate by it, and handlers may too. */
  id: string;
  event: Event;
  source: JobSource;
  /** The check's `state` before this event, so filters can see flapping start and end. */
  previous_state?: string;
}

/**
 * Only the backend writes jobs, from events it validated in full at the edge, so the event is
 * checked for the shape the workers rely on, not field by field again.
 */
const PipelineJobSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  source: v.picklist(JOB_SOURCES),
  previous_state: v.optional(v.string()),
  event: v.looseObject({
    id: v.optional(v.string()),
    check: v.optional(
      v.looseObject({
        metadata: v.looseObject({ name: v.string() }),
        handlers: v.optional(v.nullable(v.array(v.string()))),
      }),
    ),
    entity: v.optional(v.looseObject({ metadata: v.looseObject({}) })),
    metrics: v.optional(v.looseObject({})),
    metadata: v.optional(v.looseObject({})),
    pipelines: v.optional(v.nullable(v.array(v.looseObject({})))),
  }),
});

/**
 * The job's text around an event already serialized (the entity actor reuses the text it stores).
 * The event goes last, so decodeJob can hand its text back without serializing it again.
 */
export function encodeJob(id: string, source: JobSource, eventJson: string, previousState?: string): string {
  const prev = previousState === undefined ? '' : `,"previous_state":${JSON.stringify(previousState)}`;
  return `{"id":${JSON.stringify(id)},"source":"${source}"${prev},"event":${eventJson}}`;
}

/**
 * Parses a job; throws when it is not one. `eventJson` is the event's own text as encodeJob wrote
 * it (undefined if the job was written otherwise), which saves a mutator serializing it again.
 */
export function decodeJob(text: string): { job: PipelineJob; eventJson: string | undefined } {
  const job = v.parse(PipelineJobSchema, JSON.parse(text)) as PipelineJob;
  const at = text.indexOf(',"event":');
  return { job, eventJson: at > 0 && text.endsWith('}') ? text.slice(at + 9, -1) : undefined };
}

/** Decides whether an event has anywhere to go: a job for handlers that do not exist is not queued. */
export type PipelineInterest = (namespace: string, event: Event) => boolean;

/** The handlers an event names (check and metrics), the legacy path of the pipeline. */
export function namedHandlers(event: Event): string[] {
  const out = new Set<string>();
  for (const h of event.check?.handlers ?? []) out.add(h);
  const mh = (event.metrics as { handlers?: unknown } | undefined)?.handlers;
  if (Array.isArray(mh)) for (const h of mh) if (typeof h === 'string') out.add(h);
  return [...out];
}

/** Pipeline references an event carries (its own and its check's). */
export function pipelineRefs(event: Event): Array<{ name?: unknown; type?: unknown; api_version?: unknown }> {
  const check = event.check as { pipelines?: unknown } | undefined;
  const refs: Array<{ name?: unknown }> = [];
  for (const list of [event.pipelines, check?.pipelines])
    if (Array.isArray(list))
      for (const r of list) if (r && typeof r === 'object') refs.push(r as { name?: unknown });
  return refs;
}
