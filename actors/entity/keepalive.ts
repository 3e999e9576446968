import { createHash } from 'node:crypto';
import { KEEPALIVE_CHECK, type Check, type Event } from '../../proto/schemas/event.ts';
import { goTimeString } from './gotime.ts';
import type { KeepaliveState } from './messages.ts';

export const KEEPALIVE_TIMER = 'keepalive';

export const okOutput = (name: string, sentAtSec: number) =>
  `Keepalive last sent from ${name} at ${goTimeString(sentAtSec)}`;
export const silentOutput = (name: string, silentSec: number, timeout: number) =>
  `No keepalive sent from ${name} for ${silentSec} seconds (>= ${timeout})`;

/** The status a silent agent has after `silentMs`: 2 past the critical timeout, else 1. */
export function silenceStatus(ka: KeepaliveState, silentMs: number): { status: 1 | 2; timeout: number } {
  if (ka.critical > 0 && silentMs >= ka.critical * 1000) return { status: 2, timeout: ka.critical };
  return { status: 1, timeout: ka.warning };
}

/**
 * How long a new owner of the entity's shard waits, from the takeover, before it judges the agent's
 * silence: one warning timeout. Agents are heard only through a shard's owner, so while nobody
 * owned it (a node died, or the whole cluster was down) their silence says nothing about them; they
 * need the time to reconnect, and a backoff that grew during a long outage can take most of a
 * timeout. A dead agent is then reported at most one timeout late (docs/architecture.md#durable-timers).
 */
export const takeoverGrace = (ka: KeepaliveState): number => ka.warning * 1000;

/**
 * When to judge the agent next. The first judgement is at the warning timeout, then at the critical
 * timeout if there is one, then every warning timeout while the agent stays silent.
 */
export function nextJudgement(ka: KeepaliveState, now: number): number {
  const warnAt = ka.last_seen_ms + ka.warning * 1000;
  if (now < warnAt) return warnAt;
  const critAt = ka.critical > 0 ? ka.last_seen_ms + ka.critical * 1000 : Infinity;
  return Math.min(critAt > now ? critAt : Infinity, now + ka.warning * 1000);
}

/** A deterministic UUID for an event the backend makes itself, so re-firing it is recognised. */
export function derivedEventId(...parts: (string | number)[]): string {
  const h = createHash('sha1').update(parts.join('\u0000')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

export function keepaliveCheck(
  ka: KeepaliveState,
  namespace: string,
  status: number,
  output: string,
  executedSec: number,
  node: string,
): Check {
  return {
    metadata: { name: KEEPALIVE_CHECK, namespace },
    interval: ka.interval,
    timeout: ka.warning,
    ttl: ka.critical,
    handlers: ka.handlers,
    status,
    output,
    executed: executedSec,
    issued: executedSec,
    scheduler: 'monitor',
    processed_by: node,
  };
}

/** The fields of a keepalive event besides its entity and check (the actor stores those itself). */
export function keepaliveEventFields(
  namespace: string | undefined,
  id: string,
  timestampSec: number,
  sequence?: number,
): Omit<Event, 'entity' | 'check'> {
  return { timestamp: timestampSec, id, sequence, metadata: { namespace } };
}
