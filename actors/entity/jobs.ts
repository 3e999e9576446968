import { subjects } from '../../proto/names.ts';
import { encodeJob, type JobSource } from '../../proto/pipeline-job.ts';
import type { Turn } from '../runtime/types.ts';

// How the entity actor hands events to the pipeline: a job on the MONITOR_PIPELINE work queue,
// enqueued in the same turn that stores the event (the runtime publishes it before the turn's writes,
// deduplicated by the job id), so a stored event never misses its handlers.

/**
 * Queues the job of an event. The job's id is the stream's dedupe key: made from the message being
 * applied (the same on its every retry) and the event, so a retried message queues its job once,
 * while a new message about an event with the same id (a user resolving it by hand) gets its own.
 */
export function queueJob(
  t: Turn<unknown>,
  eventId: string,
  source: JobSource,
  eventJson: string,
  previousState?: string,
): void {
  const id = t.messageId === undefined || t.messageId === eventId ? eventId : `${t.messageId}.${eventId}`;
  t.enqueue(subjects.pipelineJobs, encodeJob(id, source, eventJson, previousState), id);
}
