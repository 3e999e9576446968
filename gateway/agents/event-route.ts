import * as v from 'valibot';
import { Name } from '../../proto/schemas/common.ts';
import { KEEPALIVE_CHECK, type Event } from '../../proto/schemas/event.ts';
import { entityActorId, type EventMsg, type Origin } from '../../actors/entity/messages.ts';

// Where an agent's event goes: its own entity, a proxy entity it names, or nowhere yet (metrics
// without a check wait for the pipeline of a later issue).

type EventRoute =
  | { kind: 'store'; actorId: string; msg: EventMsg; proxy?: string }
  | { kind: 'metrics-only'; summary: { points: number; handlers: string[] } }
  | { kind: 'invalid'; message: string };

export function routeAgentEvent(event: Event, origin: Origin): EventRoute {
  if (!event.check) {
    if (!event.metrics) return { kind: 'invalid', message: 'event has neither a check nor metrics' };
    const { points, handlers } = event.metrics as { points?: unknown; handlers?: unknown };
    return {
      kind: 'metrics-only',
      summary: {
        points: Array.isArray(points) ? points.length : 0,
        handlers: Array.isArray(handlers) ? handlers.filter((h): h is string => typeof h === 'string') : [],
      },
    };
  }
  const proxy = (event.check as { proxy_entity_name?: unknown }).proxy_entity_name;
  if (proxy === undefined || proxy === '' || proxy === origin.name) {
    return { kind: 'store', actorId: entityActorId(origin.namespace, origin.name), msg: { origin, event } };
  }
  if (!v.is(Name, proxy))
    return { kind: 'invalid', message: 'check.proxy_entity_name is not a valid entity name' };
  // A proxy never receives keepalives from an agent: that would make the agent judge its silence.
  if (event.check.metadata?.name === KEEPALIVE_CHECK)
    return { kind: 'invalid', message: 'keepalive events cannot target a proxy entity' };
  // The proxy entity is created with class `proxy` when unknown (the `api` source does that); an
  // existing entity keeps what it is. The agent's own entity stays out of the proxy's event.
  const entity = { metadata: { name: proxy, namespace: origin.namespace }, entity_class: 'proxy' as const };
  return {
    kind: 'store',
    actorId: entityActorId(origin.namespace, proxy),
    msg: {
      origin: { ...origin, name: proxy },
      event: { ...event, entity },
      source: 'api',
      // A legacy client's result about a proxy client is a legacy result (docs/compatibility.md#legacy-client).
      ...(event.entity?.legacy ? { legacy: true } : {}),
    },
    proxy,
  };
}
