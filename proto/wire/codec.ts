import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import {
  CONTENT_PROTOBUF,
  contentTypeForAccept,
  FrameError,
  jsonCodec,
  payloadCodecFor,
  type FrameType,
  type PayloadCodec,
} from '../frames.ts';

// The protobuf payload codec, built at start-up from monitor.proto (protobufjs parses the text; no
// generated code). Values stay in the JSON shape the rest of the programs use; only the bytes on the
// socket change.

// The compiled programs carry the text, inlined by the build (deploy/build/build.ts); run from the
// sources, it is read from the file next to this one.
declare const MONITOR_BUILD_PROTO: string | undefined;
const protoText =
  typeof MONITOR_BUILD_PROTO === 'string'
    ? MONITOR_BUILD_PROTO
    : readFileSync(new URL('./monitor.proto', import.meta.url), 'utf8');
const root = protobuf.parse(protoText, { keepCase: true }).root;
const lookup = (name: string) => root.lookupType(`monitor.core.v2.${name}`);

/** The message each frame type carries. */
const MESSAGE_OF: Record<FrameType, protobuf.Type> = {
  keepalive: lookup('Event'),
  event: lookup('Event'),
  check_request: lookup('CheckRequest'),
  entity_config: lookup('EntityConfig'),
  ack: lookup('Ack'),
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function idToBytes(id: unknown): Uint8Array | undefined {
  if (typeof id !== 'string') return undefined;
  return UUID.test(id) ? Buffer.from(id.replace(/-/g, ''), 'hex') : Buffer.from(id, 'utf8');
}

function idFromBytes(b: Uint8Array): string {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf.length !== 16) return buf.toString('utf8');
  const h = buf.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** proto3 does not send zero values; put back the ones whose absence would change the meaning. */
function restoreZeros(type: FrameType, o: Obj): Obj {
  if (type === 'ack') return { ok: false, ...o };
  if (type === 'check_request' && isObj(o.config) && Array.isArray(o.config.output_metric_thresholds))
    return {
      ...o,
      config: { ...o.config, output_metric_thresholds: o.config.output_metric_thresholds.map(zeroRules) },
    };
  if ((type === 'event' || type === 'keepalive') && isObj(o.check)) {
    const check: Obj = { status: 0, ...o.check };
    if (Array.isArray(check.history))
      check.history = check.history.map((h) => (isObj(h) ? { status: 0, executed: 0, ...h } : h));
    if (Array.isArray(check.hooks)) check.hooks = check.hooks.map((h) => (isObj(h) ? flatHook(h) : h));
    return { ...o, check };
  }
  return o;
}

/** A threshold rule's status 0 is not sent: put back, since the rule means nothing without it. */
function zeroRules(t: unknown): unknown {
  if (!isObj(t) || !Array.isArray(t.thresholds)) return t;
  return { ...t, thresholds: t.thresholds.map((r) => (isObj(r) ? { status: 0, ...r } : r)) };
}

// A hook result's JSON holds its configuration inline (`{metadata, command, ..., status, output}`),
// as Sensu's does; the wire message nests it under `config`.
const HOOK_RESULT_FIELDS = ['duration', 'executed', 'issued', 'output', 'status'];

function nestedHook(h: Obj): Obj {
  const config: Obj = {};
  const out: Obj = { config };
  for (const [k, v] of Object.entries(h)) (HOOK_RESULT_FIELDS.includes(k) ? out : config)[k] = v;
  return out;
}

function flatHook(h: Obj): Obj {
  const { config, ...rest } = h;
  return { ...(isObj(config) ? config : {}), status: 0, ...rest };
}

function forWire(obj: Obj): Obj {
  const check = obj.check;
  if (!isObj(check) || !Array.isArray(check.hooks)) return obj;
  return { ...obj, check: { ...check, hooks: check.hooks.map((h) => (isObj(h) ? nestedHook(h) : h)) } };
}

export const protobufCodec: PayloadCodec = {
  contentType: CONTENT_PROTOBUF,
  encode(value, type) {
    if (!type) throw new FrameError('protobuf payloads need their frame type');
    const T = MESSAGE_OF[type];
    let obj = (isObj(value) ? value : {}) as Obj;
    if (T.name === 'Event') obj = forWire(obj.id !== undefined ? { ...obj, id: idToBytes(obj.id) } : obj);
    return Buffer.from(T.encode(T.fromObject(obj)).finish());
  },
  decode(payload, type) {
    if (!type) throw new FrameError('protobuf payloads need their frame type');
    const T = MESSAGE_OF[type];
    let msg: protobuf.Message;
    try {
      msg = T.decode(payload);
    } catch (err) {
      throw new FrameError(`malformed protobuf ${T.name}: ${(err as Error).message}`);
    }
    const o = T.toObject(msg, { longs: Number, defaults: false }) as Obj;
    if (o.id instanceof Uint8Array) o.id = idFromBytes(o.id);
    return restoreZeros(type, o);
  },
};

/**
 * The handshake's negotiation (docs/compatibility.md#payload-encoding): protobuf only when the agent's Accept
 * is exactly `application/octet-stream`, JSON otherwise.
 */
export function codecForAccept(accept: string | undefined): PayloadCodec {
  return contentTypeForAccept(accept) === CONTENT_PROTOBUF ? protobufCodec : jsonCodec;
}

/** The agent's side with protobuf loaded: the codec the backend named in its Content-Type; undefined for one we lack. */
export function codecForContentType(contentType: string | undefined): PayloadCodec | undefined {
  return payloadCodecFor(contentType, protobufCodec);
}
