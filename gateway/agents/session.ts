import { isUtf8 } from 'node:buffer';
import * as v from 'valibot';
import {
  encodeFrame,
  decodeFrame,
  DEREGISTER_CLOSE_REASON,
  ENTITY_DELETED_CLOSE,
  ENTITY_NOT_FOUND,
  FrameError,
  jsonCodec,
  SESSION_END_HEADER,
  type Ack,
  type PayloadCodec,
} from '../../proto/frames.ts';
import { AGENT_CAPABILITIES } from '../../proto/schemas/handshake.ts';
import { subjects } from '../../proto/names.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import { Event, KeepaliveEvent } from '../../proto/schemas/event.ts';
import type { Logger } from '../../lib/log.ts';
import type { ActorClient } from '../../actors/runtime/ask.ts';
import type { NatsAdapter } from '../../actors/runtime/nats.ts';
import type { PipelineQueue } from '../../actors/pipeline/queue.ts';
import { ActorError } from '../../actors/runtime/types.ts';
import type { KeepaliveMsg, Origin } from '../../actors/entity/messages.ts';
import { entityRef, type EntityRef } from '../../actors/entity/ref.ts';
import type { AgentIdentity } from './handshake.ts';
import { ENTITY_LIMIT_MESSAGE, type EntityLimit } from '../../actors/entity/limit.ts';
import { routeAgentEvent } from './event-route.ts';
import { CheckSubscriptions, checkRequestFrame, subscriptionsOfEntityConfig } from './subscriptions.ts';
import type { CheckRequest } from '../../proto/schemas/check-request.ts';
import { requestForAgent } from './check-secrets.ts';
import { workSlices } from '../../lib/slices.ts';
import type { AgentSocket } from './edge/socket.ts';

/** WebSocket close codes we use: 1007 for undecodable frames (1009 for oversized ones is ws's own). */
const CLOSE_INVALID_PAYLOAD = 1007;

const DEFAULTS = {
  /** Frames in flight before we stop reading from the agent: back-pressure instead of unbounded memory. */
  maxInFlight: 64,
  /**
   * How long an event may take to become durable before the agent is told to send it again: long
   * enough to ride out an actor moving between nodes, short enough that a store failure costs the
   * agent seconds, not its 30 s acknowledgement timeout.
   */
  eventDeadlineMs: 5000,
  /** Bytes queued on an agent's socket beyond which check requests are dropped, not buffered. */
  maxBufferedBytes: 8 * 1024 * 1024,
  /** Heartbeat periods an agent may stay silent before its session is taken for dead. */
  silentPeriods: 2,
} as const;

export interface SessionDeps {
  actors: ActorClient;
  nats: NatsAdapter;
  log: Logger;
  /** `--entity-limit`: a new agent is refused at the handshake (402), and so is an event creating a proxy. */
  entityLimit?: EntityLimit;
  /** Where metrics-only events go: handled, never stored. */
  pipeline?: PipelineQueue;
}

/**
 * One connected agent: decodes its frames, validates them once, routes keepalives and events to the
 * entity actor, acknowledges events once they are durable, and relays direct messages from the mesh.
 */
export class AgentSession {
  private readonly origin: Origin;
  /** The agent's own entity actor. */
  private readonly entity: EntityRef;
  private logger: Logger | undefined;
  private inFlight = 0;
  private paused = false;
  private closed = false;
  private readonly direct: { unsubscribe(): void };
  private readonly checks: CheckSubscriptions;
  /** Set once an entity_config push arrived, so a slower start-up read cannot undo it. */
  private pushedConfig = false;
  /** Check requests dropped since the agent stopped reading (back-pressure). */
  private droppedChecks = 0;
  /** Last time anything came from the agent (frames or pongs), for the heartbeat. */
  private lastActivity = Date.now();
  private lastPing = 0;

  constructor(
    private readonly ws: AgentSocket,
    readonly identity: AgentIdentity,
    private readonly deps: SessionDeps,
    private readonly codec: PayloadCodec = jsonCodec,
    /** The agent came over TLS (wss): only then do check requests carry secrets. */
    private readonly secure = false,
  ) {
    this.origin = { namespace: identity.namespace, name: identity.agentName, user: identity.user };
    this.entity = entityRef(deps.actors, identity.namespace, identity.agentName);
    this.checks = new CheckSubscriptions(
      {
        nats: deps.nats,
        namespace: identity.namespace,
        agentName: identity.agentName,
        deliver: (req) => this.sendCheckRequest(req),
        log: () => this.log,
      },
      identity.subscriptions,
    );
    this.direct = deps.nats.subscribe(subjects.agent(identity.namespace, identity.agentName), (m) => {
      const end = m.header(SESSION_END_HEADER);
      if (end !== undefined) this.end(end);
      else this.relay(Buffer.from(m.data));
    });
    // Frames wait for their slice like NATS deliveries (docs/architecture.md#work-in-slices): a node
    // that just took many agents must still accept the next ones.
    ws.on('message', (data, isBinary) => {
      workSlices.run(() => this.onMessage(data, isBinary));
    });
    ws.on('pong', () => {
      this.lastActivity = Date.now();
    });
    ws.on('error', (err) => this.log.warn('agent socket error', { error: err.message }));
    ws.on('close', (code, reason) => this.onClose(code, reason));
    void this.sendEntityConfig();
  }

  private get ackRetry(): boolean {
    return this.identity.capabilities.includes(AGENT_CAPABILITIES.ackRetry);
  }

  /** Made on first use: most sessions never log, and 10,000 child loggers are memory for nothing. */
  private get log(): Logger {
    return (this.logger ??= this.deps.log.child({
      namespace: this.origin.namespace,
      agent: this.origin.name,
    }));
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    this.lastActivity = Date.now();
    if (!isBinary && !isUtf8(data)) {
      this.reject('a text frame that is not valid UTF-8');
      return;
    }
    let type: string, body: unknown;
    try {
      const frame = decodeFrame(data);
      type = frame.type;
      body = this.codec.decode(frame.payload, frame.type);
    } catch (err) {
      this.reject(err instanceof FrameError ? err.message : 'malformed frame');
      return;
    }
    switch (type) {
      case 'keepalive':
        return this.onKeepalive(body);
      case 'event':
        return this.onEvent(body);
      default:
        this.log.warn('ignoring a frame agents do not send', { type });
    }
  }

  private onKeepalive(body: unknown): void {
    const r = v.safeParse(KeepaliveEvent, body);
    if (!r.success) {
      this.reject(`invalid keepalive: ${describeIssues(r.issues)}`);
      return;
    }
    const msg: KeepaliveMsg = { origin: this.origin, event: r.output };
    this.track(
      this.entity
        .ask('keepalive', msg, { msgId: r.output.id })
        .catch((err) => this.log.warn('keepalive not recorded', { error: (err as Error).message })),
    );
  }

  private onEvent(body: unknown): void {
    const id = typeof (body as { id?: unknown })?.id === 'string' ? (body as { id: string }).id : undefined;
    const r = v.safeParse(Event, body);
    if (!r.success || !id) {
      const reason = r.success ? 'event has no id' : `invalid event: ${describeIssues(r.issues)}`;
      // An event we can name is refused for good (the agent drops it); one we cannot is a broken peer.
      if (id) this.ack({ id, ok: false, code: 'invalid', message: reason });
      else this.reject(reason);
      return;
    }
    const route = routeAgentEvent(r.output, this.origin);
    if (route.kind === 'invalid') {
      this.ack({ id, ok: false, code: 'invalid', message: route.message });
      return;
    }
    if (
      route.kind === 'store' &&
      route.proxy &&
      this.deps.entityLimit?.refuses(this.origin.namespace, route.proxy)
    ) {
      this.ack({ id, ok: false, code: 'payment_required', message: ENTITY_LIMIT_MESSAGE });
      return;
    }
    if (route.kind === 'metrics-only') {
      // Acknowledged once its job is durable (or at once when nothing handles it); never stored.
      // The agent speaks for its own entity only, whatever the event's copy says.
      const entity = {
        entity_class: 'agent' as const,
        ...r.output.entity,
        metadata: { ...r.output.entity?.metadata, name: this.origin.name, namespace: this.origin.namespace },
      };
      // A legacy client's signature is checked by its entity actor and never goes further.
      const { signature: _signature, ...event } = r.output;
      const queued =
        this.deps.pipeline?.submitMetrics(this.origin.namespace, { ...event, entity }, id) ??
        Promise.resolve(false);
      this.track(
        queued.then(
          (handled) => {
            this.log.debug('metrics event accepted', { id, handled, ...route.summary });
            this.ack({ id, ok: true });
          },
          (err) => this.notStored(id, 'metrics event not queued; the agent will resend it', err as Error),
        ),
      );
      return;
    }
    // Its own entity, or the proxy entity it names: the message's origin.
    const target = entityRef(this.deps.actors, route.msg.origin.namespace, route.msg.origin.name);
    this.track(
      target.ask('event', route.msg, { msgId: id, deadlineMs: DEFAULTS.eventDeadlineMs }).then(
        () => this.ack({ id, ok: true }),
        (err) => {
          const code = err instanceof ActorError ? err.code : 'internal';
          // A permanent refusal is final; anything else the agent resends with the same id.
          if (code === 'invalid' || code === 'not_found') {
            this.ack({ id, ok: false, code, message: (err as Error).message });
            return;
          }
          this.notStored(id, 'event not stored; the agent will resend it', err as Error);
        },
      ),
    );
  }

  /**
   * An event that could not be made durable this time. An agent that understands it hears at once;
   * an older one drops every refusal, so it is left to its acknowledgement timeout.
   */
  private notStored(id: string, what: string, err: Error): void {
    this.log.warn(what, { id, error: err.message });
    if (this.ackRetry) this.ack({ id, ok: false, code: 'unavailable', message: err.message });
  }

  private ack(a: Ack): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeFrame('ack', this.codec.encode(a, 'ack')));
  }

  /** Counts work in flight and pauses reading from the agent while too much is pending. */
  private track(p: Promise<unknown>): void {
    this.inFlight++;
    if (this.inFlight >= DEFAULTS.maxInFlight && !this.paused) {
      this.paused = true;
      this.ws.pause();
    }
    void p.finally(() => {
      this.inFlight--;
      if (this.paused && this.inFlight < DEFAULTS.maxInFlight / 2 && !this.closed) {
        this.paused = false;
        this.ws.resume();
      }
    });
  }

  private reject(reason: string): void {
    this.log.warn('closing agent session: malformed input', { reason });
    // Close reasons are limited to 123 bytes.
    this.ws.close(CLOSE_INVALID_PAYLOAD, Buffer.from(reason).subarray(0, 120).toString());
  }

  /**
   * Direct messages are frames with a JSON payload (`<type>\n<json>`), whoever sent them; the
   * session re-encodes the payload when the agent negotiated another codec.
   */
  private relay(data: Buffer): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    try {
      const frame = decodeFrame(data);
      if (frame.type === 'entity_config') this.followEntityConfig(jsonCodec.decode(frame.payload));
      if (this.codec === jsonCodec) {
        this.ws.send(data);
        return;
      }
      this.ws.send(encodeFrame(frame.type, this.codec.encode(jsonCodec.decode(frame.payload), frame.type)));
    } catch (err) {
      this.log.warn('dropping a malformed direct message', { error: (err as Error).message });
    }
  }

  /**
   * The entity of this agent was deleted through the API (on any node): the session stops, as the
   * reference's does, and the agent reconnects after its backoff; its next keepalive registers the
   * entity again (docs/compatibility.md#deleting-an-agents-entity-ends-its-session).
   */
  private end(why: string): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.log.warn('ending agent session', { reason: why });
    this.ws.close(ENTITY_DELETED_CLOSE.code, ENTITY_DELETED_CLOSE.reason);
  }

  /** The reference's session start: the agent learns the entity the backend stores, or that there is none. */
  private async sendEntityConfig(): Promise<void> {
    try {
      const entity = await this.entity.ask('get', null);
      if (entity && !this.pushedConfig) this.checks.set(subscriptionsOfEntityConfig(entity));
      if (this.ws.readyState === this.ws.OPEN)
        this.ws.send(
          encodeFrame('entity_config', this.codec.encode(entity ?? ENTITY_NOT_FOUND, 'entity_config')),
        );
    } catch (err) {
      this.log.warn('entity config not sent', { error: (err as Error).message });
    }
  }

  /** A stored entity's subscriptions replace the header's (docs/compatibility.md#agent-session). */
  private followEntityConfig(value: unknown): void {
    const list = subscriptionsOfEntityConfig(value);
    if (!list) return;
    this.pushedConfig = true;
    this.checks.set(list);
  }

  private sendCheckRequest(req: CheckRequest): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    // A stalled agent must not make the backend buffer requests without bound; the scheduler sends
    // the next one on the next interval anyway.
    if (this.ws.bufferedAmount > DEFAULTS.maxBufferedBytes) {
      // One warning per stall, not one per request: a fan-out storm must not flood the log.
      if (this.droppedChecks++ === 0)
        this.log.warn('dropping check requests: the agent is not reading', {
          check: req.config.metadata.name,
          buffered: this.ws.bufferedAmount,
        });
      return;
    }
    if (this.droppedChecks > 0) {
      this.log.warn('the agent reads again; check requests were dropped meanwhile', {
        dropped: this.droppedChecks,
      });
      this.droppedChecks = 0;
    }
    try {
      this.ws.send(checkRequestFrame(requestForAgent(req, this.secure, this.deps.log), this.codec));
    } catch (err) {
      this.log.warn('dropping a check request that cannot be encoded', {
        check: req.config.metadata.name,
        error: (err as Error).message,
      });
    }
  }

  private onClose(code: number, reason = ''): void {
    if (this.closed) return;
    this.closed = true;
    this.direct.unsubscribe();
    this.checks.close();
    // The actor deregisters only an entity stored with `deregister: true`; any other goodbye is a no-op.
    if (code === 1000 && reason === DEREGISTER_CLOSE_REASON) {
      void this.entity.ask('deregister', null).catch((err) =>
        this.log.warn('deregistration failed; the keepalive timeout will retry it', {
          error: (err as Error).message,
        }),
      );
    }
    this.log.info('agent disconnected', { code });
  }

  /**
   * Heartbeat: an agent that sent nothing (not even a pong) for two periods is gone; one quiet for a
   * period gets a ping. Keepalives count as activity, so busy sessions are never pinged.
   */
  heartbeat(now: number, periodMs: number): void {
    const quiet = now - this.lastActivity;
    if (quiet > DEFAULTS.silentPeriods * periodMs) {
      this.ws.terminate();
      return;
    }
    if (quiet > periodMs && now - this.lastPing > periodMs) {
      this.lastPing = now;
      this.ws.ping();
    }
  }
}
