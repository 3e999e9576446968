import { subjects } from '../../proto/names.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { JobSource } from '../pipeline/types.ts';
import type { Turn } from '../runtime/types.ts';

// How the entity actor hands events to the pipeline: a job on the MONITOR_PIPELINE work queue,
// enqueued in the same turn that stores the event (the runtime publishes it before the turn's writes,
// deduplicated by the job id), so a stored event never misses its handlers.

/** Decides whether an event has anywhere to go: a job for handlers that do not exist is not queued. */
export type PipelineInterest = (namespace: string, event: Event) => boolean;

/** The job's JSON around an event already serialized (the entity actor reuses the stored text). */
export function jobJson(id: string, source: JobSource, eventJson: string, previousState?: string): string {
  const prev = previousState === undefined ? '' : `,"previous_state":${JSON.stringify(previousState)}`;
  return `{"id":${JSON.stringify(id)},"source":"${source}"${prev},"event":${eventJson}}`;
}

/**
 * Queues the job of an event. The job's id is the stream's dedupe key: made from the message being
 * applied (the same on its every retry) and the event, so a retried message queues its job once,
 * while a new message about an event with the same id (a user resolving it by hand) gets its own.
 */
export function queueJob(t: Turn<unknown>, eventId: string, source: JobSource, eventJson: string, previousState?: string): void {
  const id = t.messageId === undefined || t.messageId === eventId ? eventId : `${t.messageId}.${eventId}`;
  t.enqueue(subjects.pipelineJobs, jobJson(id, source, eventJson, previousState), id);
}

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
  for (const list of [event.pipelines, check?.pipelines]) if (Array.isArray(list)) for (const r of list) if (r && typeof r === 'object') refs.push(r as { name?: unknown });
  return refs;
}
