import * as v from 'valibot';

// Agent <-> backend WebSocket framing: every binary frame is `<type>\n<payload>`. The payload
// encoding (JSON, or protobuf when negotiated) is chosen once per connection at the handshake.

const FRAME_TYPES = ['keepalive', 'event', 'check_request', 'entity_config', 'ack'] as const;
export type FrameType = (typeof FRAME_TYPES)[number];

/** Largest frame a peer accepts; bigger frames close the socket with 1009 (message too big). */
export const MAX_FRAME_BYTES = 1024 * 1024;

interface Frame {
  type: FrameType;
  payload: Buffer;
}

export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FrameError';
  }
}

const NEWLINE = 0x0a;
const MAX_TYPE_LENGTH = 32;

export function encodeFrame(type: FrameType, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([Buffer.from(type + '\n', 'ascii'), body]);
}

/** The bytes of a received WebSocket message, whichever form the library hands over. */
export function messageBytes(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export function decodeFrame(data: Buffer): Frame {
  const nl = data.subarray(0, MAX_TYPE_LENGTH + 1).indexOf(NEWLINE);
  if (nl < 0) throw new FrameError('malformed frame: no message type');
  const type = data.subarray(0, nl).toString('ascii');
  if (!(FRAME_TYPES as readonly string[]).includes(type))
    throw new FrameError(`malformed frame: unknown message type "${type.slice(0, MAX_TYPE_LENGTH)}"`);
  return { type: type as FrameType, payload: data.subarray(nl + 1) };
}

/** Content types of the handshake: JSON always works, protobuf when both sides offer it. */
export const CONTENT_JSON = 'application/json';
export const CONTENT_PROTOBUF = 'application/octet-stream';

/** The payload encoding of a session: protobuf only when the agent asked for exactly it. */
export function contentTypeForAccept(accept: string | undefined): string {
  return accept?.trim().toLowerCase() === CONTENT_PROTOBUF ? CONTENT_PROTOBUF : CONTENT_JSON;
}

/** Payload codec of one connection. */
export interface PayloadCodec {
  contentType: string;
  /** `type` names the frame: protobuf needs it to pick the message; JSON ignores it. */
  encode(value: unknown, type?: FrameType): Buffer;
  decode(payload: Buffer, type?: FrameType): unknown;
}

export const jsonCodec: PayloadCodec = {
  contentType: CONTENT_JSON,
  encode: (value) => Buffer.from(JSON.stringify(value), 'utf8'),
  decode: (payload) => {
    try {
      return JSON.parse(payload.toString('utf8'));
    } catch (err) {
      throw new FrameError(`malformed payload: ${(err as Error).message}`);
    }
  },
};

/**
 * The agent's side: the codec the backend named in its Content-Type, JSON or `protobuf` (given when
 * the agent has loaded it); undefined for one the agent lacks.
 */
export function payloadCodecFor(
  contentType: string | undefined,
  protobuf?: PayloadCodec,
): PayloadCodec | undefined {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (t === '' || t === CONTENT_JSON) return jsonCodec; // no Content-Type: an older backend, JSON
  if (t === CONTENT_PROTOBUF) return protobuf;
  return undefined;
}

/** Our addition to the protocol: the backend acknowledges an event once it is durable. */
export const Ack = v.object({
  id: v.string(),
  ok: v.boolean(),
  code: v.optional(v.string()),
  message: v.optional(v.string()),
});
export type Ack = v.InferOutput<typeof Ack>;

/**
 * Refusals that are not final: the backend could not make the event durable this time (a NATS or
 * etcd node down, the actor moving). An agent announcing the `ack-retry` capability keeps such an
 * event and resends it with backoff; every other `ok: false` is a refusal for good.
 */
export const RETRYABLE_ACK_CODES: readonly string[] = ['unavailable'];

/**
 * How many of the latest writes of one check's event the backend remembers by event id, to answer a
 * resent event instead of applying it again (docs/architecture.md#atomic-turns). A client that keeps
 * at most this many events of one check unacknowledged at a time has every resend recognised: no
 * more writes of that check can have landed after the one it repeats.
 */
export const RECOGNISED_WRITES_PER_CHECK = 8;

/**
 * Close reason of an agent stopping with `deregister` set (close code 1000): the backend then
 * deregisters its entity at once instead of waiting for the keepalive timeout.
 */
export const DEREGISTER_CLOSE_REASON = 'deregister';

/**
 * How a backend ends the session of an agent whose entity was deleted through the API (a private
 * WebSocket close code): the agent reconnects after its backoff and its next keepalive registers
 * the entity again (docs/compatibility.md#deleting-an-agents-entity-ends-its-session).
 */
export const ENTITY_DELETED_CLOSE = { code: 4004, reason: 'entity deleted' } as const;

/**
 * Header of a direct message to an agent's session (`subjects.agent`) that ends the session instead
 * of reaching the agent; its value is why (`entity deleted`).
 */
export const SESSION_END_HEADER = 'Monitor-Session-End';

/** The entity_config answer when the backend stores no entity for the agent. */
export const ENTITY_NOT_FOUND = { metadata: { name: 'not found' } } as const;
