import type { RequestCheckConfig } from '../../../proto/schemas/check-request.ts';
import { renamedCheckFields } from '../../../proto/legacy/results.ts';

// A check the legacy client defines itself (the `checks` scope of its definition), in the legacy
// generation's names, and how it meets the current generation's check request
// (docs/compatibility.md#legacy-client).

/** A local check definition as loaded and validated; custom attributes kept. */
export type LocalCheck = Record<string, unknown>;

/** A legacy hook: the command run after the check, keyed by `"<status>"`, a severity name or `non-zero`. */
export interface ClassicHook {
  command: string;
  timeout?: number;
  stdin?: boolean;
  [k: string]: unknown;
}

/** Legacy names that become other fields of our check configuration (or none). */
const RENAMED = new Set(['name', 'subscribers', 'handler', 'handlers', 'source', 'hooks', 'ttl']);

/**
 * The local definition over the request, in our field names: `subscribers` as `subscriptions`
 * (`client:<x>` as `entity:<x>`), `handler` and `handlers` as `handlers`, `source` as `proxy_entity_name`
 * (an empty one dropped, as the legacy client dropped it), a ttl under 5 s raised to 5. Its `hooks` (the
 * legacy object) are not part of the result: they are returned apart and replace the request's
 * `check_hooks`, so one check never runs both kinds.
 */
export function mergeLocal(
  request: RequestCheckConfig,
  local: LocalCheck,
): { config: RequestCheckConfig; hooks?: Record<string, ClassicHook> } {
  const out: Record<string, unknown> = { ...request };
  for (const [k, value] of Object.entries(local)) if (!RENAMED.has(k) && value !== null) out[k] = value;
  Object.assign(out, renamedCheckFields(local));
  if (typeof local.source === 'string') {
    if (local.source) out.proxy_entity_name = local.source;
    else delete out.proxy_entity_name;
  }
  const hooks = classicHooks(local.hooks);
  if (hooks) delete out.check_hooks;
  return { config: out as RequestCheckConfig, ...(hooks ? { hooks } : {}) };
}

function classicHooks(value: unknown): Record<string, ClassicHook> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, ClassicHook> = {};
  for (const [k, h] of Object.entries(value as Record<string, unknown>))
    if (h && typeof h === 'object' && typeof (h as ClassicHook).command === 'string')
      out[k] = h as ClassicHook;
  return Object.keys(out).length ? out : undefined;
}

const SEVERITIES = ['ok', 'warning', 'critical', 'unknown'];

/** The legacy hook for a status: `"<status>"`, then its severity name, then `non-zero` (status ≠ 0). */
export function selectClassicHook(
  hooks: Record<string, ClassicHook>,
  status: number,
): { key: string; hook: ClassicHook } | undefined {
  const keys = [String(status), SEVERITIES[status], status !== 0 ? 'non-zero' : undefined];
  for (const key of keys) if (key !== undefined && hooks[key]) return { key, hook: hooks[key] };
  return undefined;
}

/**
 * The check as the legacy client handed it to a command's stdin (`{client, check}`): the legacy names,
 * `name` and `issued`; no metadata.
 */
export function classicCheck(
  config: RequestCheckConfig,
  issued: number,
  hooks?: Record<string, ClassicHook>,
): Record<string, unknown> {
  const { metadata, subscriptions, proxy_entity_name, ...rest } = config;
  return {
    name: metadata.name,
    ...rest,
    ...(subscriptions ? { subscribers: subscriptions } : {}),
    ...(proxy_entity_name ? { source: proxy_entity_name } : {}),
    ...(hooks ? { hooks } : {}),
    issued,
  };
}
