import { Gauge, type Registry } from 'prom-client';
import type { EntityReadModel, EventChange } from '../../actors/entity/read-model.ts';

import { errorBody } from '../../proto/errors.ts';
import { planStart, type ResumeSource, type StreamStart } from './event-resume.ts';

/** What a feed follows: the read model's change hook, and what a resumed stream replays from. */
type ChangeSource = Pick<EntityReadModel, 'onEventChange'> & ResumeSource;
import type { Logger } from '../../lib/log.ts';
import { redactJsonText } from '../../lib/redact.ts';

/** Bytes a stream may have waiting for a slow client before it is closed. */
const STREAM_QUEUE_CAP = 8 * 1024 * 1024;
/** A comment this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

/** Which changes a stream's client sees; `parsed` gives the event for selectors (puts only). */
interface StreamFilter {
  accept(change: EventChange, parsed: () => unknown): boolean;
}

// One change reaches many streams: its redacted text and parsed value are worked out once.
const shown = new WeakMap<EventChange, string>();
const parsedOf = new WeakMap<EventChange, unknown>();
function parsed(change: EventChange): unknown {
  if (!parsedOf.has(change)) {
    let v: unknown = null;
    try {
      v = JSON.parse(change.json ?? 'null');
    } catch {
      /* stored text is ours; a bad one matches nothing */
    }
    parsedOf.set(change, v);
  }
  return parsedOf.get(change);
}
function dataOf(change: EventChange): string {
  if (change.op === 'delete')
    return JSON.stringify({ namespace: change.namespace, entity: change.entity, check: change.check });
  let text = shown.get(change);
  if (text === undefined) {
    text = redactJsonText(change.json ?? 'null', 'event', () => parsed(change));
    shown.set(change, text);
  }
  return text;
}

const encoder = new TextEncoder();
/** One SSE message; stored JSON has no raw newlines, but a multi-line data is split as SSE requires. */
function message(event: string, data: string, id?: number): Uint8Array {
  const lines = data
    .split(/\r\n|\r|\n/)
    .map((l) => `data: ${l}\n`)
    .join('');
  return encoder.encode(`event: ${event}\n${id !== undefined ? `id: ${id}\n` : ''}${lines}\n`);
}

/**
 * The live streams of event changes open on this node. Each stream follows the read model's
 * changes itself and queues at most STREAM_QUEUE_CAP bytes for its client.
 */
export class EventFeed {
  private readonly closers = new Set<() => void>();

  constructor(
    private readonly model: ChangeSource,
    private readonly log: Logger,
    private readonly limits: { queueCap: number; heartbeatMs: number } = {
      queueCap: STREAM_QUEUE_CAP,
      heartbeatMs: HEARTBEAT_MS,
    },
  ) {}

  get openCount(): number {
    return this.closers.size;
  }

  /**
   * The body of an SSE response: a comment at once (so headers go out), then where the stream starts
   * (`start`, `resume` with the changes the client missed, or `relist`; event-resume.ts), then
   * matching changes as they come. `lastEventId`: the client's `Last-Event-ID`.
   */
  open(filter: StreamFilter, who: Record<string, unknown>, lastEventId?: string): ReadableStream<Uint8Array> {
    let unsubscribe = () => {};
    let heartbeat: NodeJS.Timeout | undefined;
    let closed = false;
    const cleanup = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      clearInterval(heartbeat);
      this.closers.delete(close);
    };
    let close = () => {};
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          close = () => {
            cleanup();
            try {
              controller.close();
            } catch {
              /* already closed */
            }
          };
          this.closers.add(close);
          const send = (chunk: Uint8Array) => {
            if (closed) return;
            // desiredSize is the cap less what waits for the client: past it the client is too slow.
            if ((controller.desiredSize ?? 0) < chunk.byteLength) {
              this.log.warn('event stream closed: client too slow', {
                ...who,
                queuedBytes: this.limits.queueCap - (controller.desiredSize ?? 0),
              });
              controller.enqueue(
                message(
                  'error',
                  JSON.stringify(errorBody('unavailable', 'the client reads too slowly; stream closed')),
                ),
              );
              close();
              return;
            }
            controller.enqueue(chunk);
          };
          send(encoder.encode(': stream of event changes\n\n'));
          heartbeat = setInterval(() => send(encoder.encode(': heartbeat\n\n')), this.limits.heartbeatMs);
          heartbeat.unref();
          // Changes after `position` reach this stream live; until the start is decided they wait,
          // then those the client has (at or below `floor`) are dropped, so none comes twice.
          const position = this.model.eventRevision;
          let floor = position;
          let started = false;
          const waiting: EventChange[] = [];
          const visible = (change: EventChange) => filter.accept(change, () => parsed(change));
          const deliver = (change: EventChange) => {
            if (change.revision !== undefined && change.revision <= floor) return;
            if (visible(change)) send(message(change.op, dataOf(change), change.revision));
          };
          unsubscribe = this.model.onEventChange((change) => {
            if (started) deliver(change);
            else waiting.push(change);
          });
          const begin = (plan: StreamStart) => {
            if (closed) return;
            const head =
              plan.kind === 'relist'
                ? { message: plan.message, revision: plan.revision }
                : { revision: plan.revision };
            send(message(plan.kind, JSON.stringify(head), plan.revision));
            for (const c of plan.replay) send(message(c.op, dataOf(c), c.revision));
            if (plan.kind !== 'start')
              this.log.debug(`event stream ${plan.kind === 'resume' ? 'resumed' : 'told to list again'}`, {
                ...who,
                since: lastEventId,
                replayed: plan.replay.length,
                ...(plan.kind === 'relist' ? { reason: plan.message } : {}),
              });
            floor = plan.floor;
            started = true;
            for (const c of waiting.splice(0)) deliver(c);
          };
          // A new stream starts at once; only a resumed one reads the bucket first.
          if (lastEventId === undefined)
            begin({ kind: 'start', revision: position, replay: [], floor: position });
          else
            planStart(this.model, position, lastEventId, (c) => (visible(c) ? dataOf(c) : undefined)).then(
              begin,
              (err: Error) => {
                this.log.warn('event stream closed: its start failed', { ...who, error: err.message });
                close();
              },
            );
        },
        cancel: () => cleanup(),
      },
      { highWaterMark: this.limits.queueCap, size: (chunk) => chunk.byteLength },
    );
  }

  /** Ends every open stream (the API server is stopping). */
  closeAll(): void {
    for (const close of [...this.closers]) close();
  }

  /** `monitor_api_event_streams_open` on the node's registry (once per registry). */
  register(registry: Registry): void {
    const name = 'monitor_api_event_streams_open';
    if (registry.getSingleMetric(name)) return;
    const read = () => this.openCount;
    new Gauge({
      name,
      help: 'Live event streams open on this node',
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  }
}
