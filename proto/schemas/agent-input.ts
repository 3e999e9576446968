import * as v from 'valibot';
import { CheckStatus, Name, ObjectMeta, Seconds, UInt } from './common.ts';
import { Check, Event } from './event.ts';

// What the agent's local listeners accept from programs on the host (HTTP API, TCP/UDP sockets).
// Parsed once here; the listeners only turn the result into a core/v2 event and submit it.

/** A check event posted to the agent HTTP API: a check with a name is required (docs/compatibility.md#agent-http-api). */
const ApiCheck = v.looseObject({
  ...Check.entries,
  metadata: v.object({ ...ObjectMeta.entries, name: Name }),
  // Names the proxy entity the event is about; it must be a valid entity name.
  proxy_entity_name: v.optional(Name),
});

export const ApiEvent = v.object({ ...Event.entries, check: ApiCheck });
export type ApiEvent = v.InferOutput<typeof ApiEvent>;

/**
 * A legacy check result sent to the TCP or UDP socket (docs/compatibility.md#agent-sockets). Attributes not
 * listed here are dropped by `v.object`, which is the "unknown attributes are ignored" rule.
 */
export const SocketEvent = v.object({
  name: Name,
  status: CheckStatus,
  output: v.string(),
  source: v.optional(Name),
  /** Deprecated synonym of `source`. */
  client: v.optional(Name),
  executed: v.optional(UInt),
  issued: v.optional(UInt),
  duration: v.optional(Seconds),
  command: v.optional(v.string()),
  interval: v.optional(UInt),
  handlers: v.optional(v.array(v.string())),
  /** Legacy single handler, used when `handlers` is absent. */
  handler: v.optional(v.string()),
});
export type SocketEvent = v.InferOutput<typeof SocketEvent>;

/** The core/v2 event a socket result stands for; `source`/`client` becomes the proxy entity. */
export function socketToEvent(s: SocketEvent): Event {
  const proxy = s.source ?? s.client;
  const handlers = s.handlers ?? (s.handler !== undefined ? [s.handler] : undefined);
  const check: Record<string, unknown> = {
    metadata: { name: s.name },
    status: s.status,
    output: s.output,
    ...(s.executed !== undefined ? { executed: s.executed } : {}),
    ...(s.issued !== undefined ? { issued: s.issued } : {}),
    ...(s.duration !== undefined ? { duration: s.duration } : {}),
    ...(s.command !== undefined ? { command: s.command } : {}),
    ...(s.interval !== undefined ? { interval: s.interval } : {}),
    ...(handlers !== undefined ? { handlers } : {}),
    ...(proxy !== undefined ? { proxy_entity_name: proxy } : {}),
  };
  return { check: check as Check };
}
