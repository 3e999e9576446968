import { buckets, eventKey } from '../../proto/names.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Check, Event } from '../../proto/schemas/event.ts';
import { ActorError, type ActorBehavior, type Turn } from '../runtime/types.ts';
import { mergeCheck } from './check-state.ts';
import {
  KEEPALIVE_CHECK, KEEPALIVE_TIMER, derivedEventId, keepaliveCheck, keepaliveEvent, nextJudgement,
  okOutput, silenceStatus, silentOutput,
} from './keepalive.ts';
import { ENTITY_KIND, type EntityState, type EventMsg, type KeepaliveMsg, type KeepaliveState, type Origin } from './messages.ts';

const sec = (ms: number) => Math.floor(ms / 1000);

/** The entity as the backend stores it: identity from the authenticated session, not the payload. */
function registeredEntity(incoming: Entity, origin: Origin, previous: Entity | undefined, nowSec: number): Entity {
  const subs = new Set([...(incoming.subscriptions ?? []), `entity:${origin.name}`]);
  return {
    ...previous,
    ...incoming,
    metadata: { ...incoming.metadata, name: origin.name, namespace: origin.namespace },
    entity_class: 'agent',
    subscriptions: [...subs],
    last_seen: nowSec,
    user: origin.user,
  };
}

export interface EntityActorOptions {
  /** Name of this node, stamped as `processed_by`. */
  node: string;
}

/**
 * The entity actor: one agent or proxy entity and every event of it. It registers agents on their
 * first keepalive, stores their events, and judges silence with a durable keepalive deadline.
 */
export function entityBehavior(opts: EntityActorOptions): ActorBehavior<EntityState> {
  async function keepalive(t: Turn<EntityState>, msg: KeepaliveMsg): Promise<{ registered: boolean }> {
    const { origin, event } = msg;
    const nowSec = sec(t.now);
    const registered = t.state === undefined;
    const entity = registeredEntity(event.entity, origin, t.state?.entity, nowSec);
    const check = event.check ?? { metadata: { name: KEEPALIVE_CHECK } };
    const ka: KeepaliveState = {
      interval: check.interval ?? 20,
      warning: check.timeout ?? 120,
      critical: typeof check.ttl === 'number' && check.ttl > 0 ? check.ttl : 0,
      last_seen_ms: t.now,
      handlers: entity.keepalive_handlers?.length ? entity.keepalive_handlers : ['keepalive'],
    };
    t.state = { entity, keepalive: ka };
    if (registered) t.log.info('entity registered', { namespace: origin.namespace, entity: origin.name });

    const key = eventKey(origin.namespace, origin.name, KEEPALIVE_CHECK);
    const previous = await t.read<Event>(buckets.events, key);
    const id = event.id ?? derivedEventId(origin.namespace, origin.name, KEEPALIVE_CHECK, t.now);
    if (previous?.id !== id) {
      const merged = mergeCheck(previous?.check, keepaliveCheck(ka, origin.namespace, 0, okOutput(origin.name, nowSec), nowSec, opts.node));
      t.write(buckets.events, key, keepaliveEvent(entity, merged, id, nowSec, event.sequence));
    }
    // A new owner after a takeover waits one interval before judging, so a failover never turns a
    // healthy agent into an alert.
    t.setTimer(KEEPALIVE_TIMER, nextJudgement(ka, t.now), ka.interval * 1000);
    return { registered };
  }

  async function judgeSilence(t: Turn<EntityState>, at: number): Promise<void> {
    const st = t.state;
    const ka = st?.keepalive;
    if (!st || !ka) return;
    const silentMs = t.now - ka.last_seen_ms;
    if (silentMs < ka.warning * 1000) { t.setTimer(KEEPALIVE_TIMER, nextJudgement(ka, t.now), ka.interval * 1000); return; }
    const { status, timeout } = silenceStatus(ka, silentMs);
    const name = st.entity.metadata.name ?? '';
    const ns = st.entity.metadata.namespace ?? 'default';
    const key = eventKey(ns, name, KEEPALIVE_CHECK);
    const previous = await t.read<Event>(buckets.events, key);
    // Derived from the deadline: if this timer fires again after a failover, the event is already there.
    const id = derivedEventId(ns, name, KEEPALIVE_CHECK, 'silence', at);
    if (previous?.id !== id) {
      const nowSec = sec(t.now);
      const merged = mergeCheck(previous?.check, keepaliveCheck(ka, ns, status, silentOutput(name, sec(silentMs), timeout), nowSec, opts.node));
      t.write(buckets.events, key, keepaliveEvent(st.entity, merged, id, nowSec));
      t.log.warn('keepalive silence', { namespace: ns, entity: name, status, silent_s: sec(silentMs) });
    }
    t.setTimer(KEEPALIVE_TIMER, nextJudgement(ka, t.now), ka.interval * 1000);
  }

  async function storeEvent(t: Turn<EntityState>, msg: EventMsg): Promise<{ stored: boolean }> {
    const { origin, event } = msg;
    const check = event.check as Check | undefined;
    if (!check?.metadata?.name) throw new ActorError('invalid', 'event has no check name');
    if (check.metadata.name === KEEPALIVE_CHECK) throw new ActorError('invalid', 'keepalive events travel as keepalive frames');
    const nowSec = sec(t.now);
    const entity = t.state?.entity ?? (event.entity ? registeredEntity(event.entity, origin, undefined, nowSec) : undefined);
    if (!entity) throw new ActorError('not_found', `entity ${origin.namespace}/${origin.name} is not registered`);
    if (!t.state) t.state = { entity };
    const key = eventKey(origin.namespace, origin.name, check.metadata.name);
    const previous = await t.read<Event>(buckets.events, key);
    if (event.id && previous?.id === event.id) return { stored: false };
    const merged = mergeCheck(previous?.check, {
      ...check,
      metadata: { ...check.metadata, namespace: origin.namespace },
      executed: check.executed ?? nowSec,
      processed_by: opts.node,
    });
    t.write(buckets.events, key, {
      ...event,
      timestamp: event.timestamp ?? nowSec,
      id: event.id ?? derivedEventId(origin.namespace, origin.name, check.metadata.name, t.now),
      entity,
      check: merged,
      metadata: { ...event.metadata, namespace: origin.namespace },
    });
    return { stored: true };
  }

  return {
    kind: ENTITY_KIND,
    bucket: buckets.entities,
    keyTokens: (id) => { const i = id.indexOf('/'); return [id.slice(0, i), id.slice(i + 1)]; },
    async receive(t, type, body) {
      switch (type) {
        case 'keepalive': return keepalive(t, body as KeepaliveMsg);
        case 'event': return storeEvent(t, body as EventMsg);
        case 'get': return t.state?.entity ?? null;
        default: throw new ActorError('invalid', `entity actor has no message "${type}"`);
      }
    },
    async fire(t, timer, at) {
      if (timer === KEEPALIVE_TIMER) await judgeSilence(t, at);
    },
  };
}
