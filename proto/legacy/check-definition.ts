import { LEGACY_NAME } from './clients.ts';
import {
  AGGREGATE_NAME as AGGREGATE,
  isInt,
  isObject,
  isSet as set,
  isStrings,
  SOURCE_NAME as SOURCE,
} from './json.ts';

// A check of a legacy client's `checks` scope (docs/compatibility.md#legacy-client): a local
// definition merged over requests of the same name, or a standalone check the client schedules
// itself. Checked when the agent starts, so a typo is one line at start and not a check that never
// runs; the first problem names the attribute (`checks.<name>.<attribute>`).

type Rule = [attribute: string, ok: (c: Record<string, unknown>) => boolean, rule: string];

const RULES: Rule[] = [
  ['command', (c) => !set(c.command) || typeof c.command === 'string', 'must be a string'],
  ['standalone', (c) => !set(c.standalone) || typeof c.standalone === 'boolean', 'must be a boolean'],
  ['publish', (c) => !set(c.publish) || typeof c.publish === 'boolean', 'must be a boolean'],
  [
    'interval',
    (c) => !set(c.interval) || (isInt(c.interval) && c.interval > 0),
    'must be an integer greater than 0',
  ],
  [
    'cron',
    (c) => !set(c.cron) || (typeof c.cron === 'string' && c.cron.trim() !== ''),
    'must be a non-empty string',
  ],
  [
    'interval',
    (c) => c.standalone !== true || c.publish === false || set(c.interval) || set(c.cron),
    'or cron is required for a standalone check',
  ],
  ['subscribers', (c) => !set(c.subscribers) || isStrings(c.subscribers), 'must be an array of strings'],
  [
    'timeout',
    (c) => !set(c.timeout) || (typeof c.timeout === 'number' && c.timeout > 0),
    'must be a number greater than 0',
  ],
  ['stdin', (c) => !set(c.stdin) || typeof c.stdin === 'boolean', 'must be a boolean'],
  ['handler', (c) => !set(c.handler) || typeof c.handler === 'string', 'must be a string'],
  ['handlers', (c) => !set(c.handlers) || isStrings(c.handlers), 'must be an array of strings'],
  ['ttl', (c) => !set(c.ttl) || (isInt(c.ttl) && c.ttl > 0), 'must be an integer greater than 0'],
  ['ttl_status', (c) => !set(c.ttl_status) || isInt(c.ttl_status), 'must be an integer'],
  [
    'low_flap_threshold',
    (c) => (!set(c.low_flap_threshold) && !set(c.high_flap_threshold)) || isInt(c.low_flap_threshold),
    'must be an integer (with high_flap_threshold)',
  ],
  [
    'high_flap_threshold',
    (c) => (!set(c.low_flap_threshold) && !set(c.high_flap_threshold)) || isInt(c.high_flap_threshold),
    'must be an integer (with low_flap_threshold)',
  ],
  [
    'aggregate',
    (c) =>
      !set(c.aggregate) ||
      typeof c.aggregate === 'boolean' ||
      (typeof c.aggregate === 'string' && AGGREGATE.test(c.aggregate)),
    'must be a boolean or a name',
  ],
  [
    'aggregates',
    (c) =>
      !set(c.aggregates) ||
      (Array.isArray(c.aggregates) && c.aggregates.every((a) => typeof a === 'string' && AGGREGATE.test(a))),
    'must be an array of names',
  ],
  [
    'source',
    (c) => !set(c.source) || (typeof c.source === 'string' && (c.source === '' || SOURCE.test(c.source))),
    'cannot contain spaces, special characters, or invalid tokens',
  ],
  [
    'truncate_output',
    (c) => !set(c.truncate_output) || typeof c.truncate_output === 'boolean',
    'must be a boolean',
  ],
  ['hooks', (c) => !set(c.hooks) || isObject(c.hooks), 'must be a hash'],
  [
    'hooks',
    (c) =>
      !isObject(c.hooks) || Object.values(c.hooks).every((h) => isObject(h) && typeof h.command === 'string'),
    'must each be a hash with a string command',
  ],
];

/** The first problem of one check definition, or undefined. */
export function checkDefinitionProblem(name: string, check: unknown): string | undefined {
  if (!LEGACY_NAME.test(name))
    return `checks: check name "${name}" cannot contain spaces or special characters`;
  if (!isObject(check)) return `checks.${name} must be a hash`;
  const broken = RULES.find(([, ok]) => !ok(check));
  return broken ? `checks.${name}.${broken[0]} ${broken[2]}` : undefined;
}
