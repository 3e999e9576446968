import * as v from 'valibot';
import { Check } from '../schemas/event.ts';
import { LEGACY_NAME } from './clients.ts';
import { fromLegacySubscription } from './subscriptions.ts';
import { AGGREGATE_NAME as AGGREGATE, isInt, isSet, SOURCE_NAME as SOURCE } from './json.ts';

// A check result as the legacy generation accepted it from its API (`POST /results`) and its client
// sockets: the reference's rules, checked in its order, the first failure's message reported. The
// defaults (status 0, executed now) apply before the rules, so `{"name":"x","output":"y"}` is valid.

type Rule = [(r: Record<string, unknown>) => boolean, string];

/** The rules in the reference's order, each with its message. */
const RULES: Rule[] = [
  [(r) => typeof r.output === 'string', 'check output must be a string'],
  [(r) => isInt(r.status), 'check status must be an integer'],
  [(r) => isInt(r.executed), 'check executed timestamp must be an integer'],
  [(r) => typeof r.name === 'string', 'check name must be a string'],
  [(r) => LEGACY_NAME.test(r.name as string), 'check name cannot contain spaces or special characters'],
  [(r) => !isSet(r.handler) || typeof r.handler === 'string', 'check handler must be a string'],
  [(r) => !isSet(r.handlers) || Array.isArray(r.handlers), 'check handlers must be an array'],
  [
    (r) => !Array.isArray(r.handlers) || r.handlers.every((h) => typeof h === 'string'),
    'check handlers must each be a string',
  ],
  [
    (r) =>
      !isSet(r.aggregate) ||
      typeof r.aggregate === 'boolean' ||
      (typeof r.aggregate === 'string' && AGGREGATE.test(r.aggregate)),
    'check aggregate must be a string (name) or boolean',
  ],
  [
    (r) =>
      !isSet(r.aggregates) ||
      (Array.isArray(r.aggregates) && r.aggregates.every((a) => typeof a === 'string' && AGGREGATE.test(a))),
    'check aggregates must be an array of strings (names)',
  ],
  [
    (r) => (!isSet(r.low_flap_threshold) && !isSet(r.high_flap_threshold)) || isInt(r.low_flap_threshold),
    'check low flap threshold must be an integer',
  ],
  [
    (r) => (!isSet(r.low_flap_threshold) && !isSet(r.high_flap_threshold)) || isInt(r.high_flap_threshold),
    'check high flap threshold must be an integer',
  ],
  [
    (r) => !isSet(r.truncate_output) || typeof r.truncate_output === 'boolean',
    'check truncate_output must be a boolean',
  ],
  [
    (r) =>
      !isSet(r.truncate_output_length) ||
      (isInt(r.truncate_output_length) && (r.truncate_output_length as number) > 0),
    'check truncate_output_length must be an integer greater than 0',
  ],
  [
    (r) => !isSet(r.source) || (typeof r.source === 'string' && SOURCE.test(r.source)),
    'check source cannot contain spaces, special characters, or invalid tokens',
  ],
  [(r) => !isSet(r.ttl) || isInt(r.ttl), 'check ttl must be an integer'],
  [(r) => !isSet(r.ttl) || (r.ttl as number) > 0, 'check ttl must be greater than 0'],
  [(r) => !isSet(r.ttl_status) || isInt(r.ttl_status), 'check ttl_status must be an integer'],
];

/** A legacy check result with its defaults applied; valibot's first issue is the reference's message. */
export const LegacyResult = v.pipe(
  v.looseObject({}),
  v.transform((r): Record<string, unknown> => ({
    ...r,
    status: r.status === undefined || r.status === null || r.status === false ? 0 : r.status,
    executed:
      r.executed === undefined || r.executed === null || r.executed === false
        ? Math.floor(Date.now() / 1000)
        : r.executed,
  })),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const broken = RULES.find(([ok]) => !ok(dataset.value));
    if (broken) addIssue({ message: broken[1] });
  }),
);
export type LegacyResult = v.InferOutput<typeof LegacyResult>;

/**
 * Validates a legacy check result (the API's and, later, the legacy client sockets'): the result with
 * its defaults, or the message of the first rule it breaks.
 */
export function validateLegacyResult(
  obj: unknown,
): { ok: true; result: LegacyResult } | { ok: false; message: string } {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    return { ok: false, message: 'check result must be an object' };
  const r = v.safeParse(LegacyResult, obj);
  return r.success ? { ok: true, result: r.output } : { ok: false, message: r.issues[0].message };
}

/** Our check TTL timer's shortest period (proto/schemas/event.ts): a shorter legacy ttl is raised to it. */
const MIN_TTL = 5;

/**
 * The fields a legacy check (a result, or a client's own definition) names otherwise than our
 * check: `handler` and `handlers` as `handlers` (when any), `subscribers` as `subscriptions`
 * (`client:<x>` as `entity:<x>`), and `ttl` raised to our floor. Only those it has.
 */
export function renamedCheckFields(def: Record<string, unknown>): {
  handlers?: string[];
  subscriptions?: string[];
  ttl?: number;
} {
  const out: { handlers?: string[]; subscriptions?: string[]; ttl?: number } = {};
  const handlers = [
    ...(typeof def.handler === 'string' ? [def.handler] : []),
    ...(Array.isArray(def.handlers) ? def.handlers.filter((h): h is string => typeof h === 'string') : []),
  ];
  if (handlers.length) out.handlers = [...new Set(handlers)];
  if (Array.isArray(def.subscribers))
    out.subscriptions = def.subscribers
      .filter((s): s is string => typeof s === 'string')
      .map(fromLegacySubscription);
  if (typeof def.ttl === 'number') out.ttl = Math.max(MIN_TTL, def.ttl);
  return out;
}
/** Fields of a legacy result that name its client or are renamed in our check. */
const NOT_IN_CHECK = new Set(['name', 'source', 'client', 'handler', 'subscribers', 'history', 'signature']);

/**
 * The check our events carry for a valid legacy result: `name` as metadata, `handler` folded into
 * `handlers`, `subscribers` as subscriptions, issued and executed set to now, a negative status
 * (exit codes are 0..255) as unknown (3), a ttl under 5 s raised to 5; custom attributes kept.
 * Undefined when a field our checks model has the wrong type (an interval that is not an integer...).
 */
export function legacyResultToCheck(r: LegacyResult, nowSec: number): Check | undefined {
  const rest: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(r)) if (!NOT_IN_CHECK.has(k) && value !== null) rest[k] = value;
  const check: Record<string, unknown> = {
    ...rest,
    metadata: { name: r.name as string },
    status: (r.status as number) < 0 ? 3 : r.status,
    issued: nowSec,
    executed: nowSec,
    ...renamedCheckFields(r),
  };
  const parsed = v.safeParse(Check, check);
  return parsed.success ? parsed.output : undefined;
}

/**
 * The client a result is about: its `source` (a proxy client), else its `client` when that is a
 * valid name, else `fallback` (docs/compatibility.md#legacy-api).
 */
export function legacyResultClient(r: LegacyResult, fallback: string): string {
  if (typeof r.source === 'string' && r.source !== '') return r.source;
  if (typeof r.client === 'string' && LEGACY_NAME.test(r.client)) return r.client;
  return fallback;
}
