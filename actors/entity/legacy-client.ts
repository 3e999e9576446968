import type { Entity } from '../../proto/schemas/entity.ts';
import type { Check } from '../../proto/schemas/event.ts';
import { isObject } from '../../proto/legacy/json.ts';

// What the backend does differently for a legacy (Classic) client and its results
// (docs/compatibility.md#legacy-client): keepalive texts, the registration and deregistration checks
// built from the client's own scopes, and the truncation of stored output.

/**
 * The user the legacy API's gateway sends results as (gateway/legacy/entities.ts `LEGACY_USER` must be
 * this): a result that came that way is a legacy result whatever its entity is.
 */
export const LEGACY_API_USER = 'legacy-api';

type Obj = Record<string, unknown>;

/** A legacy client that turned keepalive monitoring off (`keepalives: false`). */
export const keepalivesOff = (entity: Entity): boolean => entity.legacy?.keepalives === false;

export const legacyOkOutput = (agoSec: number) => `Keepalive sent from client ${agoSec} seconds ago`;
export const legacySilentOutput = (silentSec: number, threshold: number) =>
  `No keepalive sent from client for ${silentSec} seconds (>=${threshold})`;

/** Deep merge as the legacy generation's: objects merge key by key, anything else is replaced. */
function deepMerge(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, value] of Object.entries(b))
    out[k] = isObject(out[k]) && isObject(value) ? deepMerge(out[k], value) : value;
  return out;
}

/**
 * `{handlers: [<default>], status: 1}` deep-merged with the client's scope, its `handler` folded into
 * `handlers` (a scope's `handlers` win over its `handler`, as they did when handled), minus `omit`.
 */
function scopedCheck(scope: unknown, defaultHandler: string, omit: readonly string[]): Obj {
  const given = isObject(scope) ? { ...scope } : {};
  for (const k of omit) delete given[k];
  const merged = deepMerge({ status: 1 }, given);
  const handlers = Array.isArray(given.handlers)
    ? given.handlers.filter((h): h is string => typeof h === 'string')
    : [typeof given.handler === 'string' && given.handler !== '' ? given.handler : defaultHandler];
  delete merged.handler;
  return { ...merged, handlers };
}

/** Whatever a scope says, a status is a status: anything but an exit code is 1. */
const statusOf = (x: unknown) => (typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 255 ? x : 1);

/** A registration or deregistration check: the client's scope merged in, then what the scope cannot change. */
function lifecycleCheck(
  c: Obj,
  fixed: { name: string; output: string; status: number },
  namespace: string,
  nowSec: number,
  node: string,
): Check {
  return {
    ...c,
    status: fixed.status,
    metadata: { name: fixed.name, namespace },
    output: fixed.output,
    interval: 1,
    issued: nowSec,
    executed: nowSec,
    scheduler: 'monitor',
    processed_by: node,
  } as Check;
}

/** The check of a legacy client's registration event. */
export function legacyRegistrationCheck(
  entity: Entity,
  namespace: string,
  nowSec: number,
  node: string,
): Check {
  const c = scopedCheck(entity.legacy?.registration, 'registration', ['metadata']);
  const fixed = { name: 'registration', output: 'new client registration', status: statusOf(c.status) };
  return lifecycleCheck(c, fixed, namespace, nowSec, node);
}

/** The check of a legacy client's deregistration event: its scope cannot change name, output, status, issued. */
export function legacyDeregistrationCheck(
  entity: Entity,
  namespace: string,
  nowSec: number,
  node: string,
): Check {
  const omit = ['name', 'output', 'status', 'issued', 'metadata'];
  const c = scopedCheck(entity.legacy?.deregistration, 'deregistration', omit);
  const fixed = { name: 'deregistration', output: 'client initiated deregistration', status: 1 };
  return lifecycleCheck(c, fixed, namespace, nowSec, node);
}

const DEFAULT_TRUNCATE_LENGTH = 255;

/**
 * The output a legacy result is stored with when it is truncated (`truncate_output`, or `type:
 * metric` unless `truncate_output: false`): its first line, cut at `truncate_output_length`
 * characters, then `\n...` when there was more. Undefined when it is stored whole. Handlers get the
 * whole output. (The legacy generation kept one character more than the length: not replicated.)
 */
export function truncatedOutput(check: Check): string | undefined {
  const c = check as Obj;
  const on = c.truncate_output === true || (c.type === 'metric' && c.truncate_output !== false);
  if (!on || typeof check.output !== 'string') return undefined;
  const len =
    typeof c.truncate_output_length === 'number' &&
    Number.isInteger(c.truncate_output_length) &&
    c.truncate_output_length > 0
      ? c.truncate_output_length
      : DEFAULT_TRUNCATE_LENGTH;
  // Trailing empty lines do not count as lines, as the legacy generation split them.
  const lines = check.output.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const first = [...(lines[0] ?? '')];
  if (lines.length <= 1 && first.length <= len) return lines[0] ?? check.output;
  return `${first.slice(0, len).join('')}\n...`;
}
