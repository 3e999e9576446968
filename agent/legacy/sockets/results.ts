import { LEGACY_NAME } from '../../../proto/legacy/clients.ts';
import { legacyResultToCheck, validateLegacyResult } from '../../../proto/legacy/results.ts';
import type { Event } from '../../../proto/schemas/event.ts';
import type { Logger } from '../../../lib/log.ts';
import type { EventSink } from '../../events/prepare.ts';

// What a legacy socket message (TCP connection, UDP datagram, HTTP body) means once it parsed as
// JSON: one result or an array of them, each checked by the legacy rules (proto/legacy/results.ts)
// and turned into the event the outbox takes. Shared by the three inputs so they accept the same.

/** What the bytes of a TCP connection hold so far. */
type Intake = { kind: 'ping' } | { kind: 'incomplete' } | { kind: 'document'; doc: unknown };

/** Reads the whole buffer again, as the legacy socket did on every chunk. */
export function readBuffer(text: string): Intake {
  if (text.trim() === 'ping') return { kind: 'ping' };
  try {
    return { kind: 'document', doc: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'incomplete' };
  }
}

type Prepared =
  | { ok: true; events: Event[] }
  | { ok: false; message: string; /** The element of an array that failed. */ index?: number };

const TOKENS = /:{3}/;

/** One result as the event the outbox takes, or the message saying why it is not one. */
function toEvent(doc: unknown, nowSec: number): Event | { message: string } {
  const valid = validateLegacyResult(doc);
  if (!valid.ok) return { message: valid.message };
  const r = valid.result;
  // The legacy client sent a source with tokens as it was; no entity can be named so.
  if (typeof r.source === 'string' && (TOKENS.test(r.source) || !LEGACY_NAME.test(r.source)))
    return { message: 'check source cannot contain unsubstituted tokens' };
  const check = legacyResultToCheck(r, nowSec);
  if (!check) return { message: 'check result has an attribute of the wrong type for a check' };
  // The legacy client kept the sender's `executed` (only the API overwrote it).
  const executed = r.executed as number;
  if (executed >= 0) check.executed = executed;
  if (typeof r.source === 'string') (check as Record<string, unknown>).proxy_entity_name = r.source;
  // The agent's submit adds its entity and the client's signature, as for every event.
  return { check, timestamp: nowSec };
}

/**
 * The events of a parsed message: an object is one result, an array several. All or nothing: one
 * invalid element refuses the whole message, so a sender told `invalid` can resend it all without
 * duplicates (the legacy client had published the elements before it; docs/compatibility.md#legacy-client).
 */
export function prepareResults(doc: unknown, now = new Date()): Prepared {
  const nowSec = Math.floor(now.getTime() / 1000);
  const many = Array.isArray(doc);
  const events: Event[] = [];
  for (const [index, item] of (many ? (doc as unknown[]) : [doc]).entries()) {
    const e = toEvent(item, nowSec);
    if ('message' in e) return { ok: false, message: e.message, ...(many ? { index } : {}) };
    events.push(e);
  }
  return { ok: true, events };
}

/** The answer to a message: every result durable in the outbox, refused by the rules, or not queued. */
type Outcome = { kind: 'ok' } | { kind: 'invalid'; message: string } | { kind: 'error'; message: string };

/**
 * Checks a parsed message and hands its results to the outbox in order; resolves once every one is
 * durable (`ok`), so an acknowledged result is never lost, unlike the legacy client which answered
 * `ok` whether its transport took the result or not.
 */
export async function acceptResults(
  doc: unknown,
  deps: { sink: EventSink; log: Logger },
  transport: string,
): Promise<Outcome> {
  const p = prepareResults(doc);
  if (!p.ok) {
    deps.log.warn('invalid check result', {
      transport,
      reason: p.message,
      ...(p.index !== undefined ? { index: p.index } : {}),
    });
    return { kind: 'invalid', message: p.message };
  }
  try {
    for (const event of p.events) await deps.sink.submit(event);
  } catch (err) {
    const message = (err as Error).message;
    deps.log.warn('check result not queued', { transport, error: message });
    return { kind: 'error', message };
  }
  return { kind: 'ok' };
}
