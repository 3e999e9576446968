import type { Check, Event } from '../schemas/event.ts';
import { toLegacyClient } from './clients.ts';
import { toLegacySilencedId, toLegacySubscriptions } from './subscriptions.ts';

// The legacy (Classic) views of a stored event (docs/compatibility.md#legacy-api): the event as
// `/events` and the `legacy` mutator show it, the result as `/results` shows it, a client's history.
// Pure functions of the stored core/v2 event: there is no second copy.

/** Fields of our check that the legacy shape has elsewhere (the event's level) or not at all. */
const NOT_IN_LEGACY_CHECK = new Set([
  'metadata',
  'subscriptions',
  'history',
  'state',
  'is_silenced',
  'silenced',
  'last_ok',
  'occurrences',
  'occurrences_watermark',
  'processed_by',
  'scheduler',
]);

type LegacyAction = 'create' | 'resolve' | 'flapping';

const statusOf = (check: Check | undefined) => check?.status ?? 0;

/** Whether the legacy API lists the event: it kept only failing or flapping ones. */
export function isLegacyEvent(event: Event): boolean {
  return statusOf(event.check) !== 0 || event.check?.state === 'flapping';
}

/** `flapping` while flapping, `create` while failing, else `resolve`. */
export function legacyAction(check: Check | undefined): LegacyAction {
  if (check?.state === 'flapping') return 'flapping';
  return statusOf(check) !== 0 ? 'create' : 'resolve';
}

/** When the status last changed: the execution time of the last history entry unlike the one before. */
export function lastStateChange(check: Check | undefined): number | null {
  const h = check?.history ?? [];
  for (let i = h.length - 1; i >= 1; i--) if (h[i]!.status !== h[i - 1]!.status) return h[i]!.executed;
  return null;
}

/**
 * The check the legacy way: `name`, `subscribers` (subscriptions, `client:<name>` form), `type`
 * (`metric` when it has an output metric format), custom attributes kept, nulls left out, and the
 * history as statuses: strings in an event (as the legacy API stored them), integers elsewhere.
 */
function toLegacyCheck(check: Check, history: 'strings' | 'integers' | 'none'): Record<string, unknown> {
  const out: Record<string, unknown> = { name: check.metadata.name ?? '' };
  for (const [k, value] of Object.entries(check))
    if (!NOT_IN_LEGACY_CHECK.has(k) && value !== null && value !== undefined) out[k] = value;
  if (check.subscriptions?.length) out.subscribers = toLegacySubscriptions(check.subscriptions);
  if (typeof out.type !== 'string') {
    const format = (check as { output_metric_format?: unknown }).output_metric_format;
    out.type = typeof format === 'string' && format !== '' ? 'metric' : 'standard';
  }
  if (
    typeof check.proxy_entity_name === 'string' &&
    check.proxy_entity_name !== '' &&
    out.source === undefined
  )
    out.source = check.proxy_entity_name;
  const statuses = (check.history ?? []).map((h) => h.status);
  if (history === 'strings') out.history = statuses.map(String);
  else if (history === 'integers') out.history = statuses;
  out.total_state_change = check.total_state_change ?? 0;
  return out;
}

/** The event the legacy way (the shape of `/events` and of the `legacy` mutator's payload). */
export function toLegacyEvent(event: Event): Record<string, unknown> {
  const check = event.check ?? { metadata: {} };
  return {
    id: event.id ?? '',
    client: event.entity ? toLegacyClient(event.entity) : {},
    check: toLegacyCheck(check, 'strings'),
    occurrences: check.occurrences ?? 1,
    occurrences_watermark: check.occurrences_watermark ?? 1,
    last_ok: check.last_ok ? check.last_ok : null,
    action: legacyAction(check),
    timestamp: event.timestamp ?? check.executed ?? 0,
    last_state_change: lastStateChange(check),
    silenced: check.is_silenced ?? false,
    silenced_by: (check.silenced ?? []).map(toLegacySilencedId),
  };
}

/** The result the legacy way: `{client, check}` with the history as integers. */
export function toLegacyResult(event: Event): { client: string; check: Record<string, unknown> } {
  return {
    client: event.entity?.metadata.name ?? '',
    check: toLegacyCheck(event.check ?? { metadata: {} }, 'integers'),
  };
}

/** One check of a client's history (`/clients/:name/history`). */
export function toLegacyHistory(event: Event): Record<string, unknown> {
  const check = event.check ?? { metadata: {} };
  return {
    check: check.metadata.name ?? '',
    history: (check.history ?? []).map((h) => h.status),
    last_execution: check.executed ?? 0,
    last_status: statusOf(check),
    last_result: toLegacyCheck(check, 'none'),
  };
}
