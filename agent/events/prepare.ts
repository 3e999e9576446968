import { randomUUID } from 'node:crypto';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';

// Every event an agent produces (check results, its HTTP API, sockets, StatsD) is completed the same
// way before it enters the outbox, so the backend sees one shape whatever the source.

interface PrepareContext {
  /** The agent's own entity; events always travel with it. */
  entity: Entity;
  namespace: string;
  /** The agent's name, for `processed_by`. */
  agentName: string;
  now?: Date;
}

/**
 * Fills what a local source may leave out: id, namespace, timestamp, `check.interval` (1),
 * `check.executed`, `processed_by`. An event naming another entity is about a proxy entity: its
 * name moves to `check.proxy_entity_name` and the agent's entity is carried instead.
 */
export function prepareEvent(input: Event, ctx: PrepareContext): Event & { id: string } {
  const nowSec = Math.floor((ctx.now ?? new Date()).getTime() / 1000);
  const givenName = input.entity?.metadata?.name;
  let check = input.check;
  if (check) {
    const proxy = (check as { proxy_entity_name?: unknown }).proxy_entity_name;
    check = {
      ...check,
      metadata: { ...check.metadata, namespace: ctx.namespace },
      interval: check.interval ?? 1,
      executed: check.executed ?? nowSec,
      processed_by: check.processed_by ?? ctx.agentName,
      ...(givenName && givenName !== ctx.entity.metadata.name && !proxy
        ? { proxy_entity_name: givenName }
        : {}),
    };
  }
  return {
    ...input,
    id: input.id ?? randomUUID(),
    timestamp: input.timestamp ?? nowSec,
    entity: ctx.entity,
    ...(check ? { check } : {}),
    metadata: { ...input.metadata, namespace: ctx.namespace },
  };
}

/** Where the agent's sources hand events: resolves once the event is safely queued (on disk). */
export interface EventSink {
  submit(event: Event): Promise<void>;
}

/** The queue refused an event (full, or the agent is stopping); the HTTP API answers 500. */
export class EventRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventRefusedError';
  }
}
