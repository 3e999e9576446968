import { JsSandbox } from '../../lib/js-sandbox.ts';
import type { Logger } from '../../lib/log.ts';
import { parseTimeOfDay, WEEKDAYS } from '../../proto/time-of-day.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { filterView } from './synthesize.ts';
import type { EventExtras, EventFilterSpec, FilterRef } from './types.ts';

const EXPRESSION_TIMEOUT_MS = 100;
const MAX_PROGRAMS = 128;

type FilterDecision = { pass: boolean; reason?: string };

/**
 * Applies one filter of a workflow (docs/compatibility.md#filters). `pass: false` drops the event. Built-ins:
 * is_incident (keeps incidents and resolutions), not_silenced, has_metrics. A resource filter
 * first checks its `when` windows (outside them, allow drops and deny passes), then its
 * expressions: allow passes when all are true, deny drops when any is; an expression that does not
 * compile, throws or runs out of time is logged and skipped.
 */
export function applyFilter(
  ref: FilterRef,
  event: Event,
  extras: EventExtras,
  now: Date,
  log: Logger,
): FilterDecision {
  if (ref.kind === 'builtin') return builtin(ref.name, extras);
  const f = ref.filter;
  const name = f.metadata.name ?? '(unnamed)';
  const days = f.when?.days;
  if (days && Object.keys(days).length > 0) {
    const inside = inWindows(days, now, (msg) =>
      log.warn('filter time window ignored', { filter: name, error: msg }),
    );
    if (!inside)
      return f.action === 'allow'
        ? { pass: false, reason: `${name}: outside its time windows` }
        : { pass: true };
  }
  const prog = program(f, log);
  const view = filterView(event, extras);
  const results: boolean[] = [];
  for (let i = 0; i < prog.ids.length; i++) {
    const id = prog.ids[i];
    if (id === undefined) continue;
    const r = prog.sandbox.run(id, view, { mode: 'bool', now, timeoutMs: EXPRESSION_TIMEOUT_MS });
    if (!r.ok) {
      // The error only: the expression's input holds the event, never logged.
      log.warn('filter expression failed; skipped', {
        filter: name,
        namespace: f.metadata.namespace,
        expression: i,
        error: r.error,
      });
      continue;
    }
    results.push(r.value === true);
  }
  if (f.action === 'allow') {
    return results.every(Boolean)
      ? { pass: true }
      : { pass: false, reason: `${name}: an allow expression is false` };
  }
  return results.some(Boolean)
    ? { pass: false, reason: `${name}: a deny expression is true` }
    : { pass: true };
}

function builtin(name: 'is_incident' | 'not_silenced' | 'has_metrics', x: EventExtras): FilterDecision {
  switch (name) {
    case 'is_incident':
      return x.is_incident || x.is_resolution
        ? { pass: true }
        : { pass: false, reason: 'is_incident: neither an incident nor a resolution' };
    case 'not_silenced':
      return x.is_silenced ? { pass: false, reason: 'not_silenced: the event is silenced' } : { pass: true };
    case 'has_metrics':
      return x.has_metrics
        ? { pass: true }
        : { pass: false, reason: 'has_metrics: the event has no metrics' };
  }
}

interface Program {
  sandbox: JsSandbox;
  ids: (number | undefined)[];
}

// A context per filter (creating one per event is slow); keyed by the filter's identity and its
// expressions, so an edited filter gets a fresh context and the old one ages out.
const programs = new Map<string, Program>();

function program(f: EventFilterSpec, log: Logger): Program {
  const key = JSON.stringify([f.metadata.namespace, f.metadata.name, f.expressions]);
  let p = programs.get(key);
  if (p) {
    programs.delete(key);
    programs.set(key, p);
    return p;
  }
  const sandbox = new JsSandbox();
  const ids = f.expressions.map((expr, i) => {
    try {
      return sandbox.define('expression', expr);
    } catch (err) {
      log.warn('filter expression does not compile; skipped', {
        filter: f.metadata.name,
        namespace: f.metadata.namespace,
        expression: i,
        error: (err as Error).message,
      });
      return undefined;
    }
  });
  p = { sandbox, ids };
  programs.set(key, p);
  if (programs.size > MAX_PROGRAMS) programs.delete(programs.keys().next().value!);
  return p;
}

const DAYS: readonly string[] = WEEKDAYS;

/**
 * Whether `now` (UTC) falls in one of the windows of `all` or of today's weekday. A window is
 * [begin, end) at minute resolution; an end before its begin crosses midnight; begin == end is
 * empty. A window that does not parse is reported and never matches.
 */
export function inWindows(
  days: Record<string, { begin: string; end: string }[]>,
  now: Date,
  warn: (msg: string) => void,
): boolean {
  const today = DAYS[now.getUTCDay()]!;
  const t = now.getUTCHours() * 60 + now.getUTCMinutes();
  for (const [day, windows] of Object.entries(days)) {
    const d = day.toLowerCase();
    if (d !== 'all' && !DAYS.includes(d)) {
      warn(`unknown day ${JSON.stringify(day)}`);
      continue;
    }
    if (d !== 'all' && d !== today) continue;
    for (const w of windows ?? []) {
      const b = parseTimeOfDay(w.begin);
      const e = parseTimeOfDay(w.end);
      if (b === undefined || e === undefined) {
        warn(
          `window ${JSON.stringify(w.begin)}-${JSON.stringify(w.end)} is not two times of day such as "5:00 PM" or "08:00"`,
        );
        continue;
      }
      if (b <= e ? t >= b && t < e : t >= b || t < e) return true;
    }
  }
  return false;
}

export { parseTimeOfDay };
