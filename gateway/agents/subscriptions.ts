import * as v from 'valibot';
import { subjects } from '../../proto/names.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import { CheckRequest } from '../../proto/schemas/check-request.ts';
import { Entity } from '../../proto/schemas/entity.ts';
import { encodeFrame, ENTITY_NOT_FOUND, type PayloadCodec } from '../../proto/frames.ts';
import type { Logger } from '../../lib/log.ts';
import type { NatsAdapter } from '../../actors/runtime/nats.ts';
import { roundRobinOnly } from '../../proto/legacy/subscriptions.ts';

// Check requests reach an agent through the subjects of its subscriptions
// (docs/architecture.md#agent-connect, docs/compatibility.md#agent-session): one subject fans out to every
// agent of a subscription, the other is shared by a queue group so NATS hands each round-robin request to
// exactly one agent, wherever it is connected.

type Sub = { unsubscribe(): void };

interface CheckSubscriptionsDeps {
  nats: Pick<NatsAdapter, 'subscribe'>;
  namespace: string;
  agentName: string;
  /** Hands a validated request to the session, which encodes and sends it. */
  deliver: (req: CheckRequest) => void;
  log: () => Logger;
}

/** The subscriptions a session listens to: the given ones plus the agent's own `entity:<name>`. */
export function effectiveSubscriptions(
  agentName: string,
  list: readonly string[] | null | undefined,
): string[] {
  return [...new Set([...(list ?? []).filter((s) => s !== ''), `entity:${agentName}`])];
}

/**
 * The subscriptions of a stored entity carried by an `entity_config` payload, or undefined when the
 * payload is "not found" or unusable (the session then keeps what it has).
 */
export function subscriptionsOfEntityConfig(value: unknown): string[] | undefined {
  const r = v.safeParse(Entity, value);
  if (!r.success || r.output.metadata.name === ENTITY_NOT_FOUND.metadata.name) return undefined;
  return r.output.subscriptions ?? [];
}

type Decoded =
  { ok: true; req: CheckRequest } | { ok: false; message: string; fields: Record<string, unknown> };

// A fan-out request reaches every session of a node one after the other, as separate copies of the
// same bytes: remembering the last payload decodes and validates it once per node, not once per
// agent, and logs a bad one once instead of once per session.
let last: { raw: Buffer; decoded: Decoded } | undefined;

function decodeRequest(data: Uint8Array): { decoded: Decoded; repeat: boolean } {
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (last && last.raw.equals(raw)) return { decoded: last.decoded, repeat: true };
  let decoded: Decoded;
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
    const r = v.safeParse(CheckRequest, body);
    decoded = r.success
      ? { ok: true, req: r.output }
      : {
          ok: false,
          message: 'dropping an invalid check request',
          fields: { error: describeIssues(r.issues) },
        };
  } catch {
    decoded = {
      ok: false,
      message: 'dropping a check request that is not JSON',
      fields: { bytes: raw.length },
    };
  }
  last = { raw: Buffer.from(raw), decoded };
  return { decoded, repeat: false };
}

const frames = new WeakMap<CheckRequest, Map<PayloadCodec, Buffer>>();

/** The `check_request` frame of a request in one codec, encoded once for all the sessions using it. */
export function checkRequestFrame(req: CheckRequest, codec: PayloadCodec): Buffer {
  let byCodec = frames.get(req);
  if (!byCodec) frames.set(req, (byCodec = new Map()));
  let frame = byCodec.get(codec);
  if (!frame) byCodec.set(codec, (frame = encodeFrame('check_request', codec.encode(req, 'check_request'))));
  return frame;
}

/** The NATS subscriptions of one session, kept in step with its entity's subscription list. */
export class CheckSubscriptions {
  private readonly active = new Map<string, Sub[]>();
  private closed = false;

  constructor(
    private readonly deps: CheckSubscriptionsDeps,
    initial: readonly string[],
  ) {
    this.set(initial);
  }

  get names(): string[] {
    return [...this.active.keys()];
  }

  /** Subscribes the new names and unsubscribes the removed ones; `entity:<name>` always stays. */
  set(list: readonly string[] | null | undefined): void {
    if (this.closed) return;
    const wanted = new Set(effectiveSubscriptions(this.deps.agentName, list));
    for (const [name, subs] of this.active) {
      if (wanted.has(name)) continue;
      for (const s of subs) s.unsubscribe();
      this.active.delete(name);
    }
    const { nats, namespace } = this.deps;
    for (const name of wanted) {
      if (this.active.has(name)) continue;
      const onMsg = (m: { data: Uint8Array }) => this.onMessage(name, m.data);
      const rrOnly = roundRobinOnly(name);
      this.active.set(
        name,
        rrOnly !== undefined
          ? [
              nats.subscribe(subjects.roundRobin(namespace, rrOnly), onMsg, {
                queue: subjects.roundRobinQueue,
              }),
            ]
          : [
              nats.subscribe(subjects.subscription(namespace, name), onMsg),
              nats.subscribe(subjects.roundRobin(namespace, name), onMsg, {
                queue: subjects.roundRobinQueue,
              }),
            ],
      );
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const subs of this.active.values()) for (const s of subs) s.unsubscribe();
    this.active.clear();
  }

  // Whoever publishes on these subjects is outside the session's trust: a bad message is dropped
  // with a warning and never closes the agent's session.
  private onMessage(subscription: string, data: Uint8Array): void {
    if (this.closed) return;
    const { decoded, repeat } = decodeRequest(data);
    if (decoded.ok) {
      this.deps.deliver(decoded.req);
      return;
    }
    const log = this.deps.log();
    if (repeat) log.debug(decoded.message, { subscription, ...decoded.fields });
    else log.warn(decoded.message, { subscription, ...decoded.fields });
  }
}
