import { DEFAULT_REDACT } from '../proto/schemas/entity.ts';
import { LEGACY_REDACT } from '../proto/legacy/redact.ts';

// Redaction of an entity's secrets wherever it is shown (REST answers, logs). Stored data keeps the
// real values: the agent needs them, and the redact list may change later.

export const REDACTED = 'REDACTED';

type Redactable = { redact?: string[] | null; legacy?: object } | null | undefined;

/**
 * The field names to hide for an entity: its own list, or the default when it names none (a legacy
 * client's default is the legacy generation's longer list: its cloud keys, for one).
 */
export function redactFields(entity: Redactable): readonly string[] {
  const list = entity?.redact;
  if (Array.isArray(list)) return list;
  return entity?.legacy ? LEGACY_REDACT : DEFAULT_REDACT;
}

/**
 * A copy of `value` with every key named in `fields` (case-insensitive, at any depth) holding
 * `"REDACTED"`. Unchanged parts are shared with the input, and a value with nothing to hide is
 * returned as is.
 */
export function redactValue<T>(value: T, fields: readonly string[]): T {
  if (fields.length === 0) return value;
  const hidden = new Set(fields.map((f) => f.toLowerCase()));
  return walk(value, hidden) as T;
}

function walk(value: unknown, hidden: Set<string>): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((x, i) => {
      const y = walk(x, hidden);
      if (y !== x) (out ??= [...value])[i] = y;
    });
    return out ?? value;
  }
  if (value === null || typeof value !== 'object') return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(value as Record<string, unknown>)) {
    const y = hidden.has(k.toLowerCase()) ? REDACTED : walk(x, hidden);
    if (y !== x) (out ??= { ...(value as Record<string, unknown>) })[k] = y;
  }
  return out ?? value;
}

/**
 * The entity as it may be shown. Its identity and its redact list are never hidden, even when the
 * list names them, so the answer still says which entity it is and what is being hidden.
 */
export function redactEntity<T extends Redactable & object>(entity: T): T {
  const fields = redactFields(entity).filter((f) => !KEPT.has(f.toLowerCase()));
  const { metadata, redact, ...rest } = entity as T & {
    metadata?: Record<string, unknown>;
    redact?: unknown;
  };
  const restOut = redactValue(rest, fields);
  let metaOut = metadata;
  if (metadata && typeof metadata === 'object') {
    const { name, namespace, ...metaRest } = metadata;
    const r = redactValue(metaRest, fields);
    if (r !== metaRest) metaOut = { name, namespace, ...r };
  }
  if (restOut === rest && metaOut === metadata) return entity;
  const out = { ...(entity as object), ...restOut } as Record<string, unknown>;
  if (metadata !== undefined) out.metadata = metaOut;
  if (redact !== undefined) out.redact = redact;
  return out as T;
}
const KEPT = new Set(['redact']);

/** An event with its entity redacted; the rest of the event is shown as stored. */
export function redactEventEntity<T extends { entity?: Redactable & object }>(event: T): T {
  if (!event?.entity || typeof event.entity !== 'object') return event;
  const entity = redactEntity(event.entity);
  return entity === event.entity ? event : { ...event, entity };
}

const patterns = new Map<string, RegExp>();
/** A regex finding any of `fields` used as a JSON key. */
function keyPattern(fields: readonly string[]): RegExp {
  const id = fields.join('\u0000');
  let re = patterns.get(id);
  if (!re) {
    if (patterns.size > 1000) patterns.clear();
    re = new RegExp(
      `"(?:${fields
        .map((f) =>
          JSON.stringify(f)
            .slice(1, -1)
            .replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('|')})"\\s*:`,
      'i',
    );
    patterns.set(id, re);
  }
  return re;
}

/**
 * Redacts stored JSON text for a list answer. Lists are served from stored text without parsing;
 * this keeps that path unless the text may hold a field to hide, which a key scan tells cheaply.
 * `kind` says whether the text is an entity or an event (whose `entity` is redacted).
 */
export function redactJsonText(json: string, kind: 'entity' | 'event', parse: () => unknown): string {
  const first = /"redact"\s*:\s*(null|\[[^\]]*\])/.exec(json);
  // The scan looks for a superset of what may be hidden: a false hit costs one parse, a miss a leak.
  let fields: string[] = [...DEFAULT_REDACT];
  let sure = true;
  if (first && first[1] !== 'null') {
    try {
      const list = JSON.parse(first[1]!) as unknown;
      if (Array.isArray(list)) fields = fields.concat(list.filter((f): f is string => typeof f === 'string'));
      else sure = false;
    } catch {
      sure = false;
    }
  }
  // A second "redact" key (in a check, or nested) makes the first one's list uncertain.
  if (first && json.indexOf('"redact"', first.index + 1) >= 0) sure = false;
  if (sure && !keyPattern(fields).test(json)) return json;
  const value = parse() as Record<string, unknown> | null;
  if (!value || typeof value !== 'object') return json;
  const out = kind === 'entity' ? redactEntity(value) : redactEventEntity(value);
  return out === value ? json : JSON.stringify(out);
}
