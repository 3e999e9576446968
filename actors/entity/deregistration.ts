import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { derivedEventId } from './keepalive.ts';
import { legacyDeregistrationCheck } from './legacy-client.ts';

const DEREGISTRATION_CHECK = 'deregistration';

/** Why an entity was deregistered: its agent said goodbye, or its keepalives stopped. */
export type DeregistrationCause = 'agent stopped' | 'keepalive timeout';

/**
 * The event a deregistered entity leaves behind for the pipeline (it is never stored): check
 * `deregistration`, status 1, for the entity's own handler or else the backend's default one.
 */
export function deregistrationEvent(
  entity: Entity,
  cause: DeregistrationCause,
  nowMs: number,
  node: string,
  defaultHandler: string,
): { event: Event; handlers: string[] } {
  const name = entity.metadata.name ?? '';
  const ns = entity.metadata.namespace ?? 'default';
  const sec = Math.floor(nowMs / 1000);
  const id = derivedEventId(ns, name, DEREGISTRATION_CHECK, nowMs);
  if (entity.legacy) {
    // Built from the client's `deregistration` scope (docs/compatibility.md#legacy-client).
    const check = legacyDeregistrationCheck(entity, ns, sec, node);
    const event: Event = { timestamp: sec, id, entity, check, metadata: { namespace: ns } };
    return { event, handlers: check.handlers ?? [] };
  }
  const handler = entity.deregistration?.handler || defaultHandler;
  const handlers = handler ? [handler] : [];
  const event: Event = {
    timestamp: sec,
    id,
    entity,
    check: {
      metadata: { name: DEREGISTRATION_CHECK, namespace: ns },
      status: 1,
      output: `Entity ${name} was deregistered (${cause})`,
      handlers,
      interval: 1,
      executed: sec,
      issued: sec,
      scheduler: 'monitor',
      processed_by: node,
    },
    metadata: { namespace: ns },
  };
  return { event, handlers };
}

const RESOLVING_OUTPUT = 'Resolving due to entity deregistering';

/**
 * What each event of a deregistered entity becomes for the pipeline
 * (docs/compatibility.md#registration-and-deregistration): resolved, its history cleared, for the handlers
 * its check names. Undefined when there is nobody to tell.
 */
export function resolutionEvent(event: Event, nowMs: number): Event | undefined {
  const handlers = event.check?.handlers ?? [];
  const check = event.check;
  if (!check || handlers.length === 0) return undefined;
  const sec = Math.floor(nowMs / 1000);
  const id = derivedEventId(event.id ?? '', 'resolution');
  return {
    ...event,
    id,
    timestamp: sec,
    check: { ...check, status: 0, state: 'passing', history: [], output: RESOLVING_OUTPUT, executed: sec },
  };
}
