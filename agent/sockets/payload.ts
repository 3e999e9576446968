import * as v from 'valibot';
import { describeIssues } from '../../proto/schemas/common.ts';
import { SocketEvent, socketToEvent } from '../../proto/schemas/agent-input.ts';
import type { Event } from '../../proto/schemas/event.ts';

// What bytes received on the TCP or UDP socket mean: a ping, a complete legacy check result, or
// not (yet) one. Kept apart from the sockets so both share it and tests can feed it directly.

type Payload =
  | { kind: 'ping' }
  | { kind: 'event'; event: Event }
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string };

export function parsePayload(buf: Buffer): Payload {
  const text = buf.toString('utf8');
  if (text.trim() === 'ping') return { kind: 'ping' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'incomplete' };
  }
  const r = v.safeParse(SocketEvent, json);
  if (!r.success) return { kind: 'invalid', reason: describeIssues(r.issues) };
  return { kind: 'event', event: socketToEvent(r.output) };
}
