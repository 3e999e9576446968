import { buckets, eventKey } from '../../proto/names.ts';
import { mergePatch } from '../../proto/merge-patch.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import { KEEPALIVE_CHECK, type Check, type Event } from '../../proto/schemas/event.ts';
import { ActorError, type ActorBehavior, type Turn } from '../runtime/types.ts';
import { isResolution, mergeCheck } from './check-state.ts';
import {
  KEEPALIVE_TIMER,
  derivedEventId,
  keepaliveCheck,
  keepaliveEventFields,
  nextJudgement,
  okOutput,
  silenceStatus,
  silentOutput,
  takeoverGrace,
} from './keepalive.ts';
import {
  ENTITY_KIND,
  type DeleteEntityMsg,
  type DeleteEventMsg,
  type EntityMessage,
  type EntityProtocol,
  type EntityState,
  type EventMsg,
  type KeepaliveMsg,
  type KeepaliveState,
  type LegacyRemoveMsg,
  type Origin,
  type PutEntityMsg,
} from './messages.ts';
import { deregistrationEvent, resolutionEvent, type DeregistrationCause } from './deregistration.ts';
import { registrationEvent } from './registration.ts';
import { redactEntity } from '../../lib/redact.ts';
import { withStoredConfig } from './managed.ts';
import { TTL_TIMER_PREFIX, armTtl, disarmTtl, expireTtl } from './ttl.ts';
import { queueJob } from './jobs.ts';
import { newEventId, normalizedEntity, sec, withCheck, withEntity } from './records.ts';
import { INVALIDATED_TIMER, invalidate, refuseWhileInvalidated } from './invalidation.ts';
import {
  LEGACY_API_USER,
  keepalivesOff,
  legacyOkOutput,
  legacySilentOutput,
  truncatedOutput,
} from './legacy-client.ts';
import { acceptSignature, refuseBadSignature } from './signature.ts';
import { cloudvmLookup, type CloudvmCheck } from './cloudvm.ts';
import type { JobSource, PipelineInterest } from '../../proto/pipeline-job.ts';

interface EntityActorOptions {
  /** Name of this node, stamped as `processed_by` when the event does not name who ran it (agents do). */
  node: string;
  /** Counters for metrics, incremented as events and keepalives are processed. */
  stats?: EntityStats;
  /** `--deregistration-handler`: the handler of deregistration events when the entity names none. */
  deregistrationHandler?: string;
  /** Whether an event has handlers or pipelines to go to; without it every event is queued. */
  interest?: PipelineInterest;
  /** The silenced entries that silence an event, and those of them to delete once it resolves. */
  silence?: (
    namespace: string,
    event: Event,
    entity: Entity,
    nowSec: number,
  ) => { names: string[]; onResolve: string[] };
  /** Deletes silenced entries (`expire_on_resolve`) after a resolution was stored. */
  unsilence?: (namespace: string, names: string[]) => Promise<void>;
  /** Sends an agent its entity as the backend now stores it (after an API update). */
  pushConfig?: (namespace: string, name: string, entity: Entity) => void;
  /** Ends the session of an agent, on whichever node it is connected (its entity was deleted). */
  endSession?: (namespace: string, name: string) => void;
  /** `--legacy-cloudvm-url`: asked after a legacy client's keepalive alert (cloudvm.ts). */
  cloudvm?: CloudvmCheck;
}

export interface EntityStats {
  events: number;
  keepalives: number;
}

/**
 * The entity actor: one agent or proxy entity and every event of it. It registers agents on their
 * first keepalive, stores their events, judges silence with a durable keepalive deadline, and is
 * the only writer of the entity and its events for the API too.
 */
export function entityBehavior(opts: EntityActorOptions): ActorBehavior<EntityState> {
  const wanted = (ns: string, event: Event) => opts.interest?.(ns, event) ?? true;

  /**
   * Stores one event of this entity (the check already merged with its history) and, in the same
   * turn, queues it for the pipeline: silencing is decided here, before storage, and never stops it.
   * Metrics travel to the pipeline but are not stored (docs/compatibility.md#event-fields).
   */
  function record(
    t: Turn<EntityState>,
    p: {
      key: string;
      id: string;
      source: JobSource;
      entity: Entity;
      check: Check;
      previous?: Event;
      rest: Omit<Event, 'entity' | 'check'>;
      /** The output stored instead of the check's (a truncated legacy result); handlers get the whole. */
      storedOutput?: string;
      /** A legacy result's `handle: false`: stored, not handled. */
      unhandled?: boolean;
    },
  ): void {
    const ns = p.entity.metadata.namespace ?? 'default';
    const nowSec = sec(t.now);
    let check = p.check;
    let onResolve: string[] = [];
    if (opts.silence) {
      const s = opts.silence(ns, { ...p.rest, check }, p.entity, nowSec);
      check = { ...check, silenced: s.names.length ? s.names : undefined, is_silenced: s.names.length > 0 };
      onResolve = s.onResolve;
    }
    const { metrics, ...stored } = p.rest;
    const toStore = p.storedOutput === undefined ? check : { ...check, output: p.storedOutput };
    const storedEvent = { ...stored, id: p.id, check: toStore };
    const storedJson = withEntity(JSON.stringify(storedEvent), p.entity);
    // The object beside its text: the next result of this check merges with it unparsed.
    t.writeJson(buckets.events, p.key, storedJson, { ...storedEvent, entity: p.entity });
    const event = { ...p.rest, check };
    if (!p.unhandled && wanted(ns, event)) {
      const eventJson =
        toStore === check ? storedJson : withEntity(JSON.stringify({ ...stored, id: p.id, check }), p.entity);
      const jobEvent =
        metrics === undefined ? eventJson : `${eventJson.slice(0, -1)},"metrics":${JSON.stringify(metrics)}}`;
      queueJob(t, p.id, p.source, jobEvent, p.previous?.check?.state);
    }
    if (onResolve.length > 0 && opts.unsilence && isResolution(check)) {
      const names = onResolve;
      t.afterCommit(() => opts.unsilence!(ns, names));
    }
  }

  /**
   * The handlers of a keepalive event: the keepalive's own (an agent's `keepalive-handlers`, a legacy
   * client's `keepalive.handler(s)`), else `keepalive`; for a legacy client, `default` when no handler
   * named `keepalive` exists, as the legacy generation chose.
   */
  function keepaliveHandlers(ns: string, check: Check, entity: Entity): string[] {
    if (!entity.legacy) return entity.keepalive_handlers?.length ? entity.keepalive_handlers : ['keepalive'];
    if (check.handlers?.length) return check.handlers;
    const probe: Event = { check: { metadata: { name: KEEPALIVE_CHECK }, handlers: ['keepalive'] } };
    return wanted(ns, probe) ? ['keepalive'] : ['default'];
  }

  /** A keepalive, from an agent (it registers the agent) or through the events API (any entity). */
  async function keepalive(
    t: Turn<EntityState>,
    origin: Origin,
    event: Event,
    entity: Entity,
  ): Promise<{ registered: boolean }> {
    const nowSec = sec(t.now);
    const registered = t.state === undefined;
    const check = event.check ?? { metadata: { name: KEEPALIVE_CHECK } };
    const ka: KeepaliveState = {
      interval: check.interval || 20,
      warning: check.timeout || 120,
      critical: typeof check.ttl === 'number' && check.ttl > 0 ? check.ttl : 0,
      last_seen_ms: t.now,
      handlers: keepaliveHandlers(origin.namespace, check, entity),
    };
    // A legacy client with `keepalives: false` is not judged: no deadline, no keepalive event.
    const off = keepalivesOff(entity);
    t.state = off
      ? { ...t.state, entity, keepalive: undefined }
      : withCheck({ ...t.state, entity, keepalive: ka }, KEEPALIVE_CHECK);
    const id = event.id ?? newEventId(t);
    if (registered) {
      t.log.info('entity registered', { namespace: origin.namespace, entity: origin.name });
      // Not stored and not in the API: handled (when a `registration` handler exists) and logged.
      const reg = registrationEvent(entity, derivedEventId(id, 'registration'), nowSec, opts.node);
      t.log.info('registration event', {
        namespace: origin.namespace,
        entity: origin.name,
        event: { ...reg, entity: redactEntity(entity) },
      });
      if (wanted(origin.namespace, reg)) queueJob(t, reg.id!, 'registration', JSON.stringify(reg));
    }

    const key = eventKey(origin.namespace, origin.name, KEEPALIVE_CHECK);
    if (off) {
      t.clearTimer(KEEPALIVE_TIMER);
      if (t.state.checks?.includes(KEEPALIVE_CHECK)) {
        t.remove(buckets.events, key);
        t.state = { ...t.state, checks: t.state.checks.filter((c) => c !== KEEPALIVE_CHECK) };
      }
      return { registered };
    }
    // A resent keepalive is recognised by its message id (the runtime), not by its event id.
    const previous = await t.read<Event>(buckets.events, key);
    const legacy = entity.legacy !== undefined;
    const output = legacy
      ? legacyOkOutput(Math.max(0, nowSec - (event.timestamp ?? nowSec)))
      : okOutput(origin.name, nowSec);
    const merged = mergeCheck(
      previous?.check,
      keepaliveCheck(ka, origin.namespace, 0, output, nowSec, opts.node),
      legacy,
    );
    const rest = keepaliveEventFields(entity.metadata.namespace, id, nowSec, event.sequence);
    record(t, { key, id, source: 'keepalive', entity, check: merged, previous, rest });
    t.setTimer(KEEPALIVE_TIMER, nextJudgement(ka, t.now), takeoverGrace(ka));
    return { registered };
  }

  const stats = opts.stats ?? { events: 0, keepalives: 0 };

  async function agentKeepalive(t: Turn<EntityState>, msg: KeepaliveMsg) {
    stats.keepalives++;
    refuseWhileInvalidated(t, 'keepalive');
    const signed = acceptSignature(t, msg.event.signature);
    // Dropped, and nothing else: the keepalive never reached the registry.
    if (!signed.ok) return { registered: false };
    const given = normalizedEntity(msg.event.entity, msg.origin, 'agent', t.state?.entity);
    // A signature never lands in the entity, whatever the client sent in its definition.
    if (given.legacy && 'signature' in given.legacy) {
      const { signature: _s, ...legacy } = given.legacy;
      given.legacy = legacy;
    }
    const incoming = { ...given, last_seen: sec(t.now), user: msg.origin.user };
    const entity = t.state?.api_managed ? withStoredConfig(incoming, t.state.entity) : incoming;
    const r = await keepalive(t, msg.origin, msg.event, entity);
    if (signed.signature && t.state) t.state = { ...t.state, signature: signed.signature };
    return r;
  }

  async function judgeSilence(t: Turn<EntityState>, at: number): Promise<void> {
    const st = t.state;
    const ka = st?.keepalive;
    if (!st || !ka || keepalivesOff(st.entity)) return;
    const silentMs = t.now - ka.last_seen_ms;
    if (silentMs < ka.warning * 1000) {
      t.setTimer(KEEPALIVE_TIMER, nextJudgement(ka, t.now), takeoverGrace(ka));
      return;
    }
    // An agent that asked to be deregistered is gone for good once its keepalives stop.
    if (st.entity.deregister) {
      await deregister(t, 'keepalive timeout');
      return;
    }
    const { status, timeout } = silenceStatus(ka, silentMs);
    const name = st.entity.metadata.name ?? '';
    const ns = st.entity.metadata.namespace ?? 'default';
    const key = eventKey(ns, name, KEEPALIVE_CHECK);
    const previous = await t.read<Event>(buckets.events, key);
    // Derived from the deadline: if this timer fires again after a failover, the event is already there.
    const id = derivedEventId(ns, name, KEEPALIVE_CHECK, 'silence', at);
    if (previous?.id !== id) {
      const nowSec = sec(t.now);
      const legacy = st.entity.legacy !== undefined;
      const output = legacy
        ? legacySilentOutput(sec(silentMs), timeout)
        : silentOutput(name, sec(silentMs), timeout);
      const merged = mergeCheck(
        previous?.check,
        keepaliveCheck(ka, ns, status, output, nowSec, opts.node),
        legacy,
      );
      const rest = keepaliveEventFields(st.entity.metadata.namespace, id, nowSec);
      record(t, { key, id, source: 'keepalive', entity: st.entity, check: merged, previous, rest });
      t.log.warn('keepalive silence', { namespace: ns, entity: name, status, silent_s: sec(silentMs) });
      const lookup = opts.cloudvm && cloudvmLookup(st.entity, ka.handlers);
      if (lookup) {
        const entity = st.entity;
        const since = ka.last_seen_ms;
        t.afterCommit(() => opts.cloudvm!(ns, entity, lookup, since));
      }
    }
    t.setTimer(KEEPALIVE_TIMER, nextJudgement(ka, t.now), takeoverGrace(ka));
  }

  async function storeEvent(t: Turn<EntityState>, msg: EventMsg): Promise<{ stored: boolean }> {
    const { origin, event } = msg;
    const check = event.check as Check | undefined;
    if (!check?.metadata?.name) throw new ActorError('invalid', 'event has no check name');
    const fromApi = msg.source === 'api';
    refuseWhileInvalidated(t, 'event');
    if (check.metadata.name === KEEPALIVE_CHECK) {
      if (!fromApi) throw new ActorError('invalid', 'keepalive events travel as keepalive frames');
      const cls = t.state?.entity.entity_class ?? event.entity?.entity_class ?? 'proxy';
      await keepalive(
        t,
        origin,
        event,
        normalizedEntity(event.entity ?? { metadata: {} }, origin, cls, t.state?.entity),
      );
      return { stored: true };
    }
    const viaLegacyApi = fromApi && origin.user === LEGACY_API_USER;
    // What clients send is signed; an operator's resolution through the legacy API is not.
    const fromClient = !fromApi || msg.legacy === true || (viaLegacyApi && check.force_resolve !== true);
    if (fromClient) refuseBadSignature(t, event.signature);
    const nowSec = sec(t.now);
    let entity = t.state?.entity;
    if (!entity) {
      if (!event.entity && !fromApi)
        throw new ActorError('not_found', `entity ${origin.namespace}/${origin.name} is not registered`);
      // An event about an entity nobody registered creates it: a proxy unless the event says otherwise.
      entity = normalizedEntity(
        event.entity ?? { metadata: {} },
        origin,
        fromApi ? (event.entity?.entity_class ?? 'proxy') : 'agent',
      );
      // A client a legacy result creates is a legacy client, unmonitored, as the legacy generation made it.
      if ((viaLegacyApi || msg.legacy) && !entity.legacy)
        entity.legacy = { ...(entity.entity_class === 'proxy' ? { type: 'proxy' } : {}), keepalives: false };
      t.log.info('entity created by an event', {
        namespace: origin.namespace,
        entity: origin.name,
        class: entity.entity_class,
      });
    }
    // A new state only when something changed: an event of a known check leaves it as it is.
    if (!t.state) t.state = { entity, checks: [check.metadata.name] };
    else t.state = withCheck(t.state, check.metadata.name);
    const key = eventKey(origin.namespace, origin.name, check.metadata.name);
    // A resent event is recognised by its message id (the runtime answers it as the first time); an
    // event that reuses a stored event's id with new content (resolved by hand) is a new result.
    const previous = await t.read<Event>(buckets.events, key);
    stats.events++;
    const legacy = viaLegacyApi || msg.legacy === true || entity.legacy !== undefined;
    const merged = mergeCheck(
      previous?.check,
      {
        ...check,
        metadata: { ...check.metadata, namespace: origin.namespace },
        executed: check.executed ?? nowSec,
        processed_by: check.processed_by ?? opts.node,
      },
      legacy,
    );
    const { entity: _given, check: _check, signature: _signature, ...rest } = event;
    const id = event.id ?? newEventId(t);
    const truncated = legacy ? truncatedOutput(merged) : undefined;
    record(t, {
      storedOutput: truncated === merged.output ? undefined : truncated,
      unhandled: legacy && check.handle === false,
      key,
      id,
      source: 'check',
      entity,
      check: merged,
      previous,
      rest: {
        ...rest,
        timestamp: event.timestamp ?? nowSec,
        metadata: { ...event.metadata, namespace: origin.namespace },
      },
    });
    armTtl(t, check);
    return { stored: true };
  }

  async function deleteEvent(
    t: Turn<EntityState>,
    origin: Origin,
    msg: DeleteEventMsg,
  ): Promise<{ deleted: boolean }> {
    const key = eventKey(origin.namespace, origin.name, msg.check);
    if ((await t.read<Event>(buckets.events, key)) === undefined) return { deleted: false };
    t.remove(buckets.events, key);
    disarmTtl(t, [msg.check]);
    if (t.state) t.state = { ...t.state, checks: (t.state.checks ?? []).filter((c) => c !== msg.check) };
    // Deleting the keepalive event stops judging the entity's silence until it sends another.
    if (msg.check === KEEPALIVE_CHECK && t.state) {
      t.clearTimer(KEEPALIVE_TIMER);
      t.state = { ...t.state, keepalive: undefined };
    }
    return { deleted: true };
  }

  async function putEntity(
    t: Turn<EntityState>,
    origin: Origin,
    msg: PutEntityMsg,
  ): Promise<{ created: boolean; entity: Entity }> {
    const existing = t.state?.entity;
    if (msg.mode === 'create' && existing)
      throw new ActorError('conflict', `entity "${origin.name}" already exists`);
    if (msg.mode === 'patch' && !existing)
      throw new ActorError('not_found', `entity "${origin.name}" not found`);
    const base = msg.mode === 'patch' ? (mergePatch(existing, msg.patch ?? {}) as Entity) : msg.entity!;
    const cls = base.entity_class ?? existing?.entity_class ?? 'proxy';
    const entity = normalizedEntity(base, origin, cls);
    entity.metadata = { ...entity.metadata, created_by: existing?.metadata.created_by ?? msg.user };
    t.state = { ...t.state, entity, api_managed: true };
    // An operator's explicit write ends a legacy invalidation (actors/entity/invalidation.ts).
    t.clearTimer(INVALIDATED_TIMER);
    // A connected agent adopts what the backend stores (labels, subscriptions, redact, ...).
    if (entity.entity_class === 'agent' && opts.pushConfig)
      t.afterCommit(() => opts.pushConfig!(origin.namespace, origin.name, entity));
    return { created: !existing, entity };
  }

  /** Hands each event of the entity to its handlers, resolved, before the entity goes. */
  async function resolveAll(t: Turn<EntityState>, ns: string, name: string): Promise<void> {
    for (const check of t.state?.checks ?? []) {
      const ev = await t.read<Event>(buckets.events, eventKey(ns, name, check));
      const r = ev && resolutionEvent(ev, t.now);
      if (r && wanted(ns, r)) queueJob(t, r.id!, 'resolution', JSON.stringify(r), ev.check?.state);
    }
  }

  /**
   * Deregisters an entity that asked for it (`deregister: true`): the entity and its events go; once
   * that is durable, each event goes to its handlers resolved, and a deregistration event to the
   * deregistration handler. For a legacy client, removing it is the built-in `deregistration`
   * handler's work: done here whatever handlers run (docs/compatibility.md#legacy-client).
   */
  async function deregister(
    t: Turn<EntityState>,
    cause: DeregistrationCause,
  ): Promise<{ deregistered: boolean }> {
    const st = t.state;
    if (!st?.entity.deregister) return { deregistered: false };
    const entity = st.entity;
    const ns = entity.metadata.namespace ?? 'default';
    const name = entity.metadata.name ?? '';
    await resolveAll(t, ns, name);
    await deleteEntity(t, { namespace: ns, name, user: 'system' });
    const job = deregistrationEvent(entity, cause, t.now, opts.node, opts.deregistrationHandler ?? '');
    t.log.info('entity deregistered', {
      namespace: ns,
      entity: name,
      cause,
      handlers: job.handlers,
      event: { ...job.event, entity: redactEntity(entity) },
    });
    if (entity.legacy) t.log.info(`deleted client ${name}`, { namespace: ns, entity: name, cause });
    // No handler, nothing to run: the reference publishes the event only when one is named.
    if (job.handlers.length > 0 && wanted(ns, job.event))
      queueJob(t, job.event.id!, 'deregistration', JSON.stringify(job.event));
    return { deregistered: true };
  }

  /**
   * Removes a legacy client (the cloudvm integration found its instance gone) as the legacy API's
   * DELETE does, unless it sent a keepalive since the alert that asked.
   */
  async function legacyRemove(t: Turn<EntityState>, msg: LegacyRemoveMsg): Promise<{ removed: boolean }> {
    const st = t.state;
    if (!st?.entity.legacy || (st.keepalive && st.keepalive.last_seen_ms > msg.since_ms))
      return { removed: false };
    const ns = st.entity.metadata.namespace ?? 'default';
    const name = st.entity.metadata.name ?? '';
    await resolveAll(t, ns, name);
    await deleteEntity(t, { namespace: ns, name, user: 'system' });
    t.log.info(`deleted client ${name}`, { namespace: ns, entity: name, cause: msg.reason });
    return { removed: true };
  }

  /** Deletes the entity and every event of it; the actor's record goes too (but a tombstone). */
  async function deleteEntity(
    t: Turn<EntityState>,
    origin: Origin,
    msg?: DeleteEntityMsg | null,
  ): Promise<{ deleted: boolean }> {
    if (!t.state) return { deleted: false };
    if (msg?.invalidate_s && msg.invalidate_s > 0) invalidate(t, msg.invalidate_s);
    for (const check of t.state.checks ?? [])
      t.remove(buckets.events, eventKey(origin.namespace, origin.name, check));
    t.clearTimer(KEEPALIVE_TIMER);
    disarmTtl(t, t.state.checks ?? []);
    t.state = undefined;
    return { deleted: true };
  }

  /**
   * A delete asked for from outside (the APIs): the entity goes, and an agent connected for it is
   * told once the delete is durable, so it does not run on a deleted entity unnoticed
   * (docs/compatibility.md#deleting-an-agents-entity-ends-its-session). A legacy client keeps its
   * connection, as Sensu Classic's did: its keepalives are what its removal is judged by.
   */
  async function deleteAgentEntity(
    t: Turn<EntityState>,
    origin: Origin,
    msg?: DeleteEntityMsg | null,
  ): Promise<{ deleted: boolean }> {
    const entity = t.state?.entity;
    const res = await deleteEntity(t, origin, msg);
    if (res.deleted && entity?.entity_class === 'agent' && !entity.legacy && opts.endSession)
      t.afterCommit(() => opts.endSession!(origin.namespace, origin.name));
    return res;
  }

  const originOf = (id: string, user = 'system'): Origin => {
    const i = id.indexOf('/');
    return { namespace: id.slice(0, i), name: id.slice(i + 1), user };
  };

  // Typed by the protocol, so a handler and its senders cannot disagree on a body or a reply.
  const handlers: {
    [T in EntityMessage]: (
      t: Turn<EntityState>,
      body: EntityProtocol[T]['body'],
    ) => EntityProtocol[T]['reply'] | Promise<EntityProtocol[T]['reply']>;
  } = {
    keepalive: (t, msg) => agentKeepalive(t, msg),
    event: (t, msg) =>
      storeEvent(t, { ...msg, origin: { ...originOf(t.id), user: msg.origin?.user ?? 'system' } }),
    'delete-event': (t, msg) => deleteEvent(t, originOf(t.id), msg),
    'put-entity': (t, msg) => putEntity(t, originOf(t.id, msg.user), msg),
    'delete-entity': (t, msg) => deleteAgentEntity(t, originOf(t.id), msg),
    get: (t) => t.state?.entity ?? null,
    deregister: (t) => deregister(t, 'agent stopped'),
    'legacy-remove': (t, msg) => legacyRemove(t, msg),
  };

  return {
    kind: ENTITY_KIND,
    bucket: buckets.entities,
    keyTokens: (id) => {
      const i = id.indexOf('/');
      return [id.slice(0, i), id.slice(i + 1)];
    },
    async receive(t, type, body) {
      if (!Object.hasOwn(handlers, type))
        throw new ActorError('invalid', `entity actor has no message "${type}"`);
      // The body was validated where it entered the system (the gateway), not here.
      return handlers[type as EntityMessage](t, body as never);
    },
    async fire(t, timer, at) {
      // The invalidation tombstone (invalidation.ts) needs nothing when it fires: it just ends.
      if (timer === KEEPALIVE_TIMER) await judgeSilence(t, at);
      else if (timer.startsWith(TTL_TIMER_PREFIX)) {
        const failure = await expireTtl(t, timer, at);
        if (failure) record(t, { ...failure, source: 'ttl' });
      }
    },
  };
}
