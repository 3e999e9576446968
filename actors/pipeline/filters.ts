import { Sandbox, SandboxUnavailableError, type SandboxResult } from '../../lib/sandbox/index.ts';
import type { Logger } from '../../lib/log.ts';
import { parseTimeOfDay, WEEKDAYS } from '../../proto/time-of-day.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { filterView } from './synthesize.ts';
import type { EventExtras, EventFilterSpec, FilterLibraries, FilterRef } from './types.ts';

const EXPRESSION_TIMEOUT_MS = 100;
const MAX_PROGRAMS = 128;

type FilterDecision = { pass: boolean; reason?: string };

/** A filter's runtime assets as JavaScript libraries, or why they could not be had (run.ts). */
export type FilterLibs = FilterLibraries | { key: string; error: string };

/**
 * Applies one filter of a workflow (docs/compatibility.md#filters). `pass: false` drops the event. Built-ins:
 * is_incident (keeps incidents and resolutions), not_silenced, has_metrics. A resource filter
 * first checks its `when` windows (outside them, allow drops and deny passes), then its
 * expressions (lib/sandbox): allow passes when all are true, deny drops when any is. An expression
 * that does not compile, throws, runs out of time or memory, or answers a promise has failed: it is
 * not true for an allow filter (the event is dropped) and not true for a deny filter (the event is not
 * denied for it). Each failing expression is logged once per version of its filter.
 */
export function applyFilter(
  ref: FilterRef,
  event: Event,
  extras: EventExtras,
  now: Date,
  log: Logger,
  libraries?: FilterLibs,
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
  const prog = program(f, libraries);
  const defined = prog.defs.flatMap((d) => (d.id === undefined ? [] : [d.id]));
  const allow = f.action === 'allow';
  // Allow stops at the first expression that is not true, deny at the first that is.
  const decisive = (r: SandboxResult) => (allow ? !r.ok || r.value !== true : r.ok && r.value === true);
  const compileFailure = prog.defs.findIndex((d) => d.id === undefined);
  const runs =
    allow && compileFailure >= 0
      ? []
      : prog.sandbox.runAll(defined, filterView(event, extras), {
          mode: 'bool',
          now,
          timeoutMs: EXPRESSION_TIMEOUT_MS,
          stopWhen: decisive,
        });
  let k = 0;
  let failed: number | undefined;
  let anyTrue = false;
  let allTrue = true;
  for (const [i, d] of prog.defs.entries()) {
    if (d.id !== undefined && k >= runs.length) {
      allTrue = false; // not evaluated: an earlier expression decided
      continue;
    }
    const r: SandboxResult = d.id === undefined ? { ok: false, error: d.error! } : runs[k++]!;
    if (!r.ok) {
      failed ??= i;
      allTrue = false;
      if (!prog.logged.has(i)) {
        prog.logged.add(i);
        // The error only: the expression's input holds the event, never logged.
        log.warn('filter expression failed: not true for this filter (logged once per filter version)', {
          filter: name,
          namespace: f.metadata.namespace,
          action: f.action,
          expression: i,
          error: r.error,
        });
      }
      continue;
    }
    if (r.value === true) anyTrue = true;
    else allTrue = false;
  }
  if (prog.unavailable && programs.get(prog.key) === prog) {
    programs.delete(prog.key);
    prog.sandbox.dispose();
  }
  if (allow) {
    if (allTrue) return { pass: true };
    return {
      pass: false,
      reason:
        failed !== undefined
          ? `${name}: allow expression ${failed} failed`
          : `${name}: an allow expression is false`,
    };
  }
  return anyTrue ? { pass: false, reason: `${name}: a deny expression is true` } : { pass: true };
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
  key: string;
  sandbox: Sandbox;
  /** Each expression's definition in the sandbox, or why it has none. */
  defs: { id?: number; error?: string }[];
  /** Expressions whose failure was logged. */
  logged: Set<number>;
  /** The sandbox was not loaded: the program is made again next time. */
  unavailable: boolean;
}

// A sandbox per filter version (making one per event is slow), reused for every event: keyed by
// the filter's identity and its expressions, so an edited filter gets a fresh one and the old one
// ages out (and is freed).
const programs = new Map<string, Program>();

function program(f: EventFilterSpec, libraries: FilterLibs | undefined): Program {
  const key = JSON.stringify([f.metadata.namespace, f.metadata.name, f.expressions, libraries?.key]);
  let p = programs.get(key);
  if (p) {
    programs.delete(key);
    programs.set(key, p);
    return p;
  }
  // The runtime assets' libraries run in the filter's own context before its expressions, as Sensu
  // evaluates them in the filter's VM; without them, every expression fails with the reason.
  const libraryError = libraries && 'error' in libraries ? libraries.error : undefined;
  const sandbox = new Sandbox(libraries && 'list' in libraries ? { libraries: libraries.list } : {});
  let unavailable = false;
  const defs = f.expressions.map((expr) => {
    if (libraryError !== undefined) return { error: libraryError };
    try {
      return { id: sandbox.define('expression', expr) };
    } catch (err) {
      if (err instanceof SandboxUnavailableError) unavailable = true;
      return { error: (err as Error).message };
    }
  });
  p = { key, sandbox, defs, logged: new Set(), unavailable };
  programs.set(key, p);
  if (programs.size > MAX_PROGRAMS) {
    const oldest = programs.keys().next().value!;
    programs.get(oldest)?.sandbox.dispose();
    programs.delete(oldest);
  }
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
