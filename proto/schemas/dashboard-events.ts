import * as v from 'valibot';

// The query of the dashboard's events list (docs/compatibility.md#dashboard-events-api): the
// browser's events page asks for one sorted, filtered page and the status counts in one request.

/** The orders the list is served in; each has one direction (the one a person looks for). */
const EVENT_SORTS = ['severity', 'last_change', 'last_ok', 'entity'] as const;
export type EventSort = (typeof EVENT_SORTS)[number];

/** Status words: `unknown` is any status other than 0, 1 and 2. */
export const STATUS_WORDS = { passing: 0, warning: 1, critical: 2, unknown: -1 } as const;
type StatusWord = keyof typeof STATUS_WORDS;

/** A status filter: a whole number (that status exactly) or a status word. */
export type StatusFilter = { status: number } | { word: StatusWord };

const MAX_EVENTS_PAGE = 1000;
const DEFAULT_EVENTS_PAGE = 100;

const wholeText = v.pipe(v.string(), v.regex(/^\d{1,9}$/, 'must be a whole number'));
const Offset = v.pipe(wholeText, v.transform(Number));
const Limit = v.pipe(
  wholeText,
  v.transform(Number),
  v.maxValue(MAX_EVENTS_PAGE, `must be at most ${MAX_EVENTS_PAGE}`),
);

const bool = v.pipe(
  v.picklist(['true', 'false'], 'must be true or false'),
  v.transform((s) => s === 'true'),
);

const statusList = v.pipe(
  v.string(),
  v.transform((s) =>
    s
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== ''),
  ),
  v.array(
    v.pipe(
      v.string(),
      v.check(
        (t) => /^\d{1,9}$/.test(t) || t in STATUS_WORDS,
        (i) =>
          `"${String(i.input)}" is neither a whole number nor one of ${Object.keys(STATUS_WORDS).join(', ')}`,
      ),
    ),
  ),
  v.transform((tokens): StatusFilter[] =>
    tokens.map((t) => (/^\d+$/.test(t) ? { status: Number(t) } : { word: t as StatusWord })),
  ),
);

/**
 * The query parameters (each given once; the selectors may repeat and are read apart). Unknown
 * parameters are refused, so a misspelt filter is a 400 rather than a list that ignores it.
 */
export const DashboardEventsQuery = v.strictObject(
  {
    sort: v.optional(v.picklist(EVENT_SORTS, `must be one of ${EVENT_SORTS.join(', ')}`), 'severity'),
    limit: v.optional(Limit, String(DEFAULT_EVENTS_PAGE)),
    offset: v.optional(Offset, '0'),
    status: v.optional(statusList),
    entity: v.optional(v.string()),
    check: v.optional(v.string()),
    silenced: v.optional(bool),
    flapping: v.optional(bool),
    fieldSelector: v.optional(v.string()),
    labelSelector: v.optional(v.string()),
  },
  'unknown parameter',
);
export type DashboardEventsQuery = v.InferOutput<typeof DashboardEventsQuery>;
