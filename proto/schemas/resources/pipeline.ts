import * as v from 'valibot';
import { Name } from '../common.ts';
import { parseTimeOfDay, WEEKDAYS } from '../../time-of-day.ts';
import { Meta, OptStrings, EnvVars, Secrets, ResourceRef, UInt } from './meta.ts';
import { jsSource, jsSyntaxIssue, type JsSyntaxCheck } from './javascript.ts';

const HANDLER_TYPES = ['pipe', 'tcp', 'udp', 'set'] as const;

/** core/v2 Handler. */
export const Handler = v.pipe(
  v.object({
    metadata: Meta,
    type: v.optional(v.picklist(HANDLER_TYPES, `handler type is one of ${HANDLER_TYPES.join(', ')}`), 'pipe'),
    mutator: v.optional(v.string()),
    command: v.optional(v.string()),
    timeout: v.optional(UInt),
    socket: v.optional(
      v.nullable(
        v.object({ host: v.string(), port: v.pipe(UInt, v.maxValue(65535, 'port must be at most 65535')) }),
      ),
    ),
    handlers: OptStrings,
    filters: OptStrings,
    env_vars: EnvVars,
    runtime_assets: OptStrings,
    secrets: Secrets,
  }),
  v.check((h) => h.type !== 'pipe' || !!h.command, 'a pipe handler needs a command'),
  v.check(
    (h) => (h.type !== 'tcp' && h.type !== 'udp') || !!(h.socket?.host && h.socket.port),
    'a tcp or udp handler needs socket.host and socket.port',
  ),
  v.check((h) => h.type !== 'set' || (h.handlers?.length ?? 0) > 0, 'a set handler needs handlers'),
);

const TimeOfDay = v.pipe(
  v.string(),
  v.check(
    (t) => parseTimeOfDay(t) !== undefined,
    'a time window begin or end is a time of day such as "5:00 PM" or "17:00"',
  ),
);
const Window = v.object({ begin: TimeOfDay, end: TimeOfDay });
const WindowDays = v.pipe(
  v.record(v.string(), v.array(Window)),
  v.check(
    (d) =>
      Object.keys(d).every(
        (k) => k.toLowerCase() === 'all' || (WEEKDAYS as readonly string[]).includes(k.toLowerCase()),
      ),
    'time window days are all, sunday, monday, tuesday, wednesday, thursday, friday or saturday',
  ),
);

/** core/v2 EventFilter; with `js`, its expressions must compile (./javascript.ts). */
export const eventFilterSchema = (js?: JsSyntaxCheck) =>
  v.object({
    metadata: Meta,
    action: v.picklist(['allow', 'deny'], 'action is allow or deny'),
    expressions: v.pipe(
      v.array(jsSource('expression', js)),
      v.minLength(1, 'a filter needs at least one expression'),
    ),
    when: v.optional(v.nullable(v.object({ days: v.optional(WindowDays) }))),
    runtime_assets: OptStrings,
  });
export const EventFilter = eventFilterSchema();

const MUTATOR_TYPES = ['pipe', 'javascript'] as const;

/** core/v2 Mutator; with `js`, a javascript mutator's eval must compile (./javascript.ts). */
export const mutatorSchema = (js?: JsSyntaxCheck) =>
  v.pipe(
    v.object({
      metadata: Meta,
      type: v.optional(v.picklist(MUTATOR_TYPES, 'mutator type is pipe or javascript'), 'pipe'),
      command: v.optional(v.string()),
      eval: v.optional(v.string()),
      timeout: v.optional(UInt),
      env_vars: EnvVars,
      runtime_assets: OptStrings,
      secrets: Secrets,
    }),
    v.check((m) => m.type !== 'pipe' || !!m.command, 'a pipe mutator needs a command'),
    v.check((m) => m.type !== 'javascript' || !!m.eval, 'a javascript mutator needs eval'),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const m = dataset.value;
      if (m.type !== 'javascript' || !m.eval) return;
      const message = jsSyntaxIssue(js, 'body', m.eval);
      if (message)
        addIssue({
          message,
          path: [{ type: 'object', origin: 'value', input: m, key: 'eval', value: m.eval }],
        });
    }),
  );
export const Mutator = mutatorSchema();

const Workflow = v.object({
  name: Name,
  filters: v.optional(v.nullable(v.array(ResourceRef))),
  mutator: v.optional(v.nullable(ResourceRef)),
  handler: ResourceRef,
});

/** core/v2 Pipeline. */
export const Pipeline = v.object({
  metadata: Meta,
  workflows: v.pipe(v.array(Workflow), v.minLength(1, 'a pipeline needs at least one workflow')),
});
