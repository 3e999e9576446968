import { subjects } from '../../proto/names.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { encodeJob, type PipelineInterest } from '../../proto/pipeline-job.ts';
import type { NatsAdapter } from '../runtime/nats.ts';

/**
 * The way into the pipeline for events that are handled but never stored: metrics-only events from
 * agents and the API. (Stored events are queued by their entity actor, in the turn that stores them.)
 */
export class PipelineQueue {
  constructor(
    private readonly nats: NatsAdapter,
    private readonly interest: PipelineInterest,
  ) {}

  /** Resolves once the job is durable; false when nothing would handle the event (no job queued). */
  async submitMetrics(namespace: string, event: Event, id: string): Promise<boolean> {
    if (!this.interest(namespace, event)) return false;
    const withNs: Event = { ...event, id, metadata: { ...event.metadata, namespace } };
    await this.nats.publishDurable(
      subjects.pipelineJobs,
      Buffer.from(encodeJob(id, 'metrics', JSON.stringify(withNs))),
      id,
    );
    return true;
  }
}
