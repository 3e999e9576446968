// @ts-check
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { route, setParams } from '../router.js';
import { ALL, namespace } from '../namespace.js';
import { Table } from '../components/table.js';
import { ErrorMessage } from '../components/notices.js';
import { Ago, StatusBadge } from '../components/status.js';
import { EventActions } from '../components/events/actions.js';
import { useEventStream } from '../components/events/live.js';
import { EventFlags, detailHref, lastChangeOf, outputLine, useClock } from '../components/events/format.js';
import {
  checkOf,
  entityOf,
  keyOf,
  keyOfDelete,
  listEvents,
  nsOf,
  streamUrl,
} from '../components/events/api.js';
import {
  CountLinks,
  DEFAULT_SIZE,
  FILTERS,
  PAGE_SIZES,
  Pager,
  SORTS,
  STATUS_CHOICES,
  SelectFilter,
  SelectorFilters,
  TextFilter,
  onValue,
  param,
  withParams,
} from '../components/events/filters.js';

/**
 * @typedef {import('../components/events/api.js').MonitorEvent} MonitorEvent
 * @typedef {import('../components/events/api.js').Counts} Counts
 * @typedef {{ rows: MonitorEvent[], total: number, counts: Counts }} Loaded
 */

// The events page (docs/architecture.md#events-pages). Filters, sort, page and page size live in the
// URL; the server sorts, filters, counts and pages (/api/dashboard/v1); the table draws the rows of
// one page in view. Live: the stream's puts update the rows shown in place, and every change asks
// for fresh counts (at most every COUNTS_EVERY_MS); when they differ from the list's, a "Refresh"
// offers the new list rather than moving rows under the reader's eyes.

const COUNTS_EVERY_MS = 2000;

/** /events @param {{ params: Record<string, string> }} _p */
export function Events(_p) {
  const params = route.value.params;
  const ns = namespace.value;
  const sort = param(params, 'sort') || 'severity';
  const size = PAGE_SIZES.includes(Number(params.get('size'))) ? Number(params.get('size')) : DEFAULT_SIZE;
  const page = Math.max(1, Math.floor(Number(params.get('page')) || 1));
  /** @type {Record<string, string>} */
  const filters = {};
  for (const k of FILTERS) if (params.get(k)) filters[k] = /** @type {string} */ (params.get(k));
  const filterKey = JSON.stringify(filters);
  const queryKey = JSON.stringify([ns, sort, size, page, filters]);

  useClock();
  const [data, setData] = useState(/** @type {Loaded | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {unknown} */ (undefined));
  const [loading, setLoading] = useState(true);
  const [stale, setStale] = useState(false);
  const [selected, setSelected] = useState(/** @type {Set<string>} */ (new Set()));
  // Loads are numbered: an answer applies unless a later one already did, or the query changed.
  const issued = useRef(0);
  const applied = useRef(0);
  const currentQuery = useRef(queryKey);
  currentQuery.current = queryKey;
  /** What is shown, written through at once (two puts may come before the next render). */
  const loaded = useRef(/** @type {Loaded | undefined} */ (undefined));
  /** @param {Loaded} next */
  const show = (next) => {
    loaded.current = next;
    setData(next);
  };
  // A list answered after a put or delete arrived may hold the older version of that event: what
  // the stream said while lists were under way is kept here and wins over their answers.
  const changes = useRef(0);
  const inflight = useRef(0);
  const recent = useRef(/** @type {Map<string, { at: number, event: MonitorEvent | null }>} */ (new Map()));

  const load = useCallback(
    /** @param {boolean} quiet keep what is shown while loading (a refresh) */
    async (quiet) => {
      const mine = ++issued.current;
      const asked = queryKey;
      const since = changes.current;
      inflight.current++;
      if (!quiet) setLoading(true);
      try {
        const res = await listEvents(ns, {
          ...filters,
          sort,
          limit: size,
          offset: (page - 1) * size,
        });
        if (asked !== currentQuery.current || mine < applied.current) return;
        applied.current = mine;
        /** @type {MonitorEvent[]} */
        const rows = [];
        for (const e of res.items) {
          const r = recent.current.get(keyOf(e));
          if (!r || r.at <= since) rows.push(e);
          else if (r.event) rows.push(r.event);
        }
        show({ rows, total: res.total, counts: res.counts });
        setError(undefined);
        setStale(false);
      } catch (err) {
        if (asked === currentQuery.current && mine >= applied.current) setError(err);
      } finally {
        if (--inflight.current === 0) recent.current.clear();
        if (asked === currentQuery.current && mine === issued.current) setLoading(false);
      }
    },
    [queryKey],
  );

  useEffect(() => {
    void load(false);
  }, [load]);
  // A new set of filters, or another namespace: what was picked is not on the page any more.
  useEffect(() => setSelected(new Set()), [ns, filterKey]);

  // Fresh counts after changes, at most every COUNTS_EVERY_MS; a list that differs is offered anew.
  const countsTimer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined));
  const refreshCounts = useCallback(() => {
    if (countsTimer.current) return;
    countsTimer.current = setTimeout(async () => {
      const asked = queryKey;
      const after = applied.current;
      try {
        const res = await listEvents(ns, { ...filters, sort, limit: 0 });
        countsTimer.current = undefined;
        const shown = loaded.current;
        // A list loaded meanwhile has counts as fresh as these.
        if (asked !== currentQuery.current || after !== applied.current || !shown) return;
        if (JSON.stringify(res.counts) !== JSON.stringify(shown.counts) || res.total !== shown.total) {
          show({ ...shown, counts: res.counts, total: res.total });
          setStale(true);
        }
      } catch {
        countsTimer.current = undefined;
      }
    }, COUNTS_EVERY_MS);
  }, [queryKey]);
  useEffect(
    () => () => {
      clearTimeout(countsTimer.current);
      countsTimer.current = undefined;
    },
    [queryKey],
  );

  useEventStream(streamUrl(ns), {
    // The list was asked for before the stream opened (at first), or the stream was away: list again.
    onOpen: () => void load(true),
    onPut: (e) => {
      const k = keyOf(e);
      if (inflight.current > 0) recent.current.set(k, { at: ++changes.current, event: e });
      const shown = loaded.current;
      const i = shown ? shown.rows.findIndex((r) => keyOf(r) === k) : -1;
      if (shown && i >= 0) {
        const rows = shown.rows.slice();
        rows[i] = e;
        show({ ...shown, rows });
      }
      refreshCounts();
    },
    onDelete: (d) => {
      const k = keyOfDelete(d);
      if (inflight.current > 0) recent.current.set(k, { at: ++changes.current, event: null });
      const shown = loaded.current;
      if (shown?.rows.some((r) => keyOf(r) === k)) {
        show({ ...shown, rows: shown.rows.filter((r) => keyOf(r) !== k) });
        setSelected((s) => {
          if (!s.has(k)) return s;
          const n = new Set(s);
          n.delete(k);
          return n;
        });
      }
      refreshCounts();
    },
  });

  const rows = data?.rows ?? [];
  const picked = useMemo(() => rows.filter((r) => selected.has(keyOf(r))), [rows, selected]);
  const pages = Math.ceil((data?.total ?? 0) / size);
  const filtered = Object.keys(filters).length > 0;

  /** @type {import('../components/table.js').Column<MonitorEvent>[]} */
  const columns = [
    {
      key: 'status',
      label: 'Status',
      sort: 'severity',
      render: (e) => html`<${StatusBadge} status=${e.check?.status} /><${EventFlags} event=${e} />`,
    },
    {
      key: 'entity',
      label: 'Entity',
      sort: 'entity',
      render: (e) => html`<a href=${detailHref(e)}>${entityOf(e)}</a>`,
    },
    {
      key: 'check',
      label: 'Check',
      render: (e) => html`<a href=${detailHref(e)}>${checkOf(e)}</a>`,
    },
    ...(ns === ALL
      ? [
          {
            key: 'namespace',
            label: 'Namespace',
            class: 'optional',
            render: (/** @type {MonitorEvent} */ e) => nsOf(e),
          },
        ]
      : []),
    {
      key: 'output',
      label: 'Output',
      class: 'optional output',
      render: (e) => html`<span title=${e.check?.output ?? ''}>${outputLine(e)}</span>`,
    },
    {
      key: 'changed',
      label: 'Last change',
      sort: 'last_change',
      render: (e) => html`<${Ago} at=${lastChangeOf(e)} />`,
    },
    {
      key: 'last_ok',
      label: 'Last OK',
      sort: 'last_ok',
      class: 'optional',
      render: (e) => html`<${Ago} at=${e.check?.last_ok} />`,
    },
  ];

  return html`<section class="events-page">
    <h1>Events</h1>
    <${CountLinks} counts=${data?.counts} />
    <form
      class="toolbar event-filters"
      aria-label="Filters"
      onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}
    >
      <${SelectFilter} name="status" label="Status" choices=${STATUS_CHOICES} />
      <${TextFilter} name="entity" label="Entity" placeholder="name contains" />
      <${TextFilter} name="check" label="Check" placeholder="name contains" />
      <${SelectFilter}
        name="silenced"
        label="Silenced"
        choices=${[
          ['', 'any'],
          ['true', 'silenced'],
          ['false', 'not silenced'],
        ]}
      />
      <${SelectFilter}
        name="flapping"
        label="Flapping"
        choices=${[
          ['', 'any'],
          ['true', 'flapping'],
          ['false', 'not flapping'],
        ]}
      />
      <label
        >Sort by
        <select
          name="sort"
          value=${sort}
          onChange=${onValue((v) => setParams({ sort: v === 'severity' ? undefined : v, page: undefined }, { replace: false }))}
        >
          ${SORTS.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
        </select></label
      >
      ${filtered && html`<a class="clear-filters" href=${withParams(Object.fromEntries(FILTERS.map((k) => [k, undefined])))}>Clear filters</a>`}
    </form>
    <${SelectorFilters} />
    <div class="toolbar bulk">
      <span class="picked-count" aria-live="polite"
        >${picked.length ? `${picked.length} selected` : 'None selected'}</span
      >
      <${EventActions}
        events=${picked}
        label="Actions on the selected events"
        onDone=${(/** @type {string} */ a) => {
          if (a === 'delete') setSelected(new Set());
          void load(true);
        }}
      />
      ${
        stale &&
        html`<p class="stale" role="status">
          Events changed since this list was loaded.
          <button type="button" onClick=${() => void load(true)}>Refresh</button>
        </p>`
      }
    </div>
    ${error !== undefined && html`<${ErrorMessage} error=${error} retry=${() => void load(false)} />`}
    ${
      data &&
      html`<div aria-busy=${loading ? 'true' : 'false'}>
        <p class="muted list-summary">
          ${data.total === 1 ? '1 event' : `${data.total} events`}${filtered ? ' match the filters' : ''}${
            ns === ALL ? ' in all namespaces' : ` in namespace ${ns}`
          }${loading ? ' (loading…)' : ''}
        </p>
        <${Table}
          label="Events"
          columns=${columns}
          rows=${rows}
          rowKey=${keyOf}
          rowLabel=${(/** @type {MonitorEvent} */ e) =>
            ns === ALL ? `${nsOf(e)}/${entityOf(e)}/${checkOf(e)}` : `${entityOf(e)}/${checkOf(e)}`}
          selected=${selected}
          onSelect=${setSelected}
          sort=${sort}
          onSort=${(/** @type {string} */ s) => setParams({ sort: s === 'severity' ? undefined : s, page: undefined }, { replace: false })}
          empty=${
            data.total > 0
              ? 'This page is past the last one.'
              : filtered
                ? 'No events match these filters.'
                : 'No events here yet.'
          }
        />
        ${(data.total > size || page > 1) && html`<${Pager} page=${page} pages=${pages} size=${size} />`}
      </div>`
    }
    ${!data && loading && error === undefined && html`<p class="muted" role="status">Loading events…</p>`}
  </section>`;
}
