// @ts-check
import { call, json, nsPath, urlOf } from '../../api/client.js';

/**
 * The events pages' calls: the dashboard's own sorted list with counts
 * (docs/compatibility.md#dashboard-events-api), and the core API's writes.
 *
 * @typedef {{ status: number, executed: number }} HistoryEntry
 * @typedef {{
 *   metadata: { name: string, namespace?: string, labels?: Record<string, string> | null },
 *   status?: number, output?: string, state?: string, executed?: number, issued?: number,
 *   last_ok?: number, occurrences?: number, occurrences_watermark?: number,
 *   total_state_change?: number, history?: HistoryEntry[] | null, silenced?: string[] | null,
 *   is_silenced?: boolean, proxy_entity_name?: string, hooks?: unknown[] | null,
 *   subscriptions?: string[] | null, [k: string]: unknown,
 * }} Check
 * @typedef {{
 *   metadata: { name: string, namespace?: string, labels?: Record<string, string> | null },
 *   entity_class?: string, subscriptions?: string[] | null, [k: string]: unknown,
 * }} Entity
 * @typedef {{
 *   entity: Entity, check: Check, metadata?: { namespace?: string }, timestamp?: number,
 *   silenced_by?: string[], metrics?: { points?: unknown[] | null } | null, [k: string]: unknown,
 * }} MonitorEvent
 * @typedef {Record<'total' | 'critical' | 'warning' | 'unknown' | 'passing' | 'silenced' | 'flapping', number>} Counts
 * @typedef {{ items: MonitorEvent[], total: number, offset: number, limit: number, counts: Counts }} EventPage
 */

const DASHBOARD = '/api/dashboard/v1';

/** @param {MonitorEvent} e */
export const nsOf = (e) =>
  e.metadata?.namespace ?? e.check?.metadata?.namespace ?? e.entity?.metadata?.namespace ?? '';
/** @param {MonitorEvent} e */
export const entityOf = (e) => e.entity?.metadata?.name ?? '';
/** @param {MonitorEvent} e */
export const checkOf = (e) => e.check?.metadata?.name ?? '';
/** A row's identity: namespace, entity and check. @param {MonitorEvent} e */
export const keyOf = (e) => `${nsOf(e)}\u0000${entityOf(e)}\u0000${checkOf(e)}`;
/** @param {{ namespace: string, entity: string, check: string }} d */
export const keyOfDelete = (d) => `${d.namespace}\u0000${d.entity}\u0000${d.check}`;

/**
 * The entries silencing it: the server's live answer (`silenced_by`), else what the event carries
 * from its last result (a stream put).
 * @param {MonitorEvent} e
 */
export const silencedByOf = (e) => e.silenced_by ?? e.check?.silenced ?? [];

/** @param {string} ns @param {string} entity @param {string} check */
const eventPath = (ns, entity, check) =>
  `${nsPath(ns, 'events')}/${encodeURIComponent(entity)}/${encodeURIComponent(check)}`;

/**
 * One page of events and the counts, sorted and filtered by the server.
 * @param {string} ns a namespace, or `*` for all
 * @param {Record<string, string | number | undefined>} query
 * @param {AbortSignal} [signal]
 * @returns {Promise<EventPage>}
 */
export function listEvents(ns, query, signal) {
  const path =
    ns === '*' ? `${DASHBOARD}/events` : `${DASHBOARD}/namespaces/${encodeURIComponent(ns)}/events`;
  return json(path, { query, signal });
}

/**
 * One event with `silenced_by`.
 * @param {string} ns @param {string} entity @param {string} check @param {AbortSignal} [signal]
 * @returns {Promise<MonitorEvent>}
 */
export function getEvent(ns, entity, check, signal) {
  return json(
    `${DASHBOARD}/namespaces/${encodeURIComponent(ns)}/events/${encodeURIComponent(entity)}/${encodeURIComponent(check)}`,
    { signal },
  );
}

/**
 * The URL of the live stream of a namespace (or of all), narrowed to one event when given.
 * @param {string} ns
 * @param {{ entity?: string, check?: string }} [only]
 */
export const streamUrl = (ns, only = {}) => urlOf(`${nsPath(ns, 'events')}/stream`, only);

/**
 * Resolves by hand, as `monitorctl event resolve` does: a new result with status 0 (the entity as
 * stored is kept: only its name is sent).
 * @param {MonitorEvent} e
 * @param {string} username
 */
export function resolveEvent(e, username) {
  const now = Math.floor(Date.now() / 1000);
  const { metadata: _m, silenced: _s, is_silenced: _i, ...check } = e.check;
  return call(eventPath(nsOf(e), entityOf(e), checkOf(e)), {
    method: 'PUT',
    body: {
      entity: { metadata: { name: entityOf(e), namespace: nsOf(e) } },
      check: {
        ...check,
        metadata: e.check.metadata,
        status: 0,
        output: `Resolved manually by ${username} (dashboard)`,
        executed: now,
      },
      timestamp: now,
    },
  });
}

/** @param {MonitorEvent} e */
export const deleteEvent = (e) => call(eventPath(nsOf(e), entityOf(e), checkOf(e)), { method: 'DELETE' });

/** The keepalive is the agent's own: no check configuration runs it. @param {MonitorEvent} e */
export const canRerun = (e) => checkOf(e) !== 'keepalive';

/**
 * Runs the event's check now on its entity's agent (its `entity:<name>` subscription); a proxy
 * entity's check runs where the check runs (its own subscriptions), since no agent has the proxy's.
 * @param {MonitorEvent} e
 * @param {string} username
 */
export function rerunEvent(e, username) {
  const proxy = !!e.check.proxy_entity_name || e.entity?.entity_class === 'proxy';
  return call(`${nsPath(nsOf(e), 'checks')}/${encodeURIComponent(checkOf(e))}/execute`, {
    method: 'POST',
    body: {
      check: checkOf(e),
      ...(proxy ? {} : { subscriptions: [`entity:${entityOf(e)}`] }),
      creator: username,
      reason: 're-run from the dashboard',
    },
  });
}

/**
 * Silences one event: the entry `entity:<entity>:<check>` (created, or replaced when it exists).
 * @param {MonitorEvent} e
 * @param {{ reason: string, expire: number, expireOnResolve: boolean, creator: string }} o `expire`
 *   in seconds, -1 for never
 */
export function silenceEvent(e, o) {
  const subscription = `entity:${entityOf(e)}`;
  const check = checkOf(e);
  const name = `${subscription}:${check}`;
  const ns = nsOf(e);
  return call(`${nsPath(ns, 'silenced')}/${encodeURIComponent(name)}`, {
    method: 'PUT',
    body: {
      metadata: { name, namespace: ns },
      subscription,
      check,
      expire: o.expire,
      expire_on_resolve: o.expireOnResolve,
      reason: o.reason,
      creator: o.creator,
    },
  });
}
