// @ts-check
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { route, setParams, href } from '../../router.js';
import { useDebounced } from '../../hooks.js';

/** @typedef {import('./api.js').Counts} Counts */

// The events page's filters, count links and pager (docs/architecture.md#events-pages): each writes
// its part of the URL, which the page reads.

export const PAGE_SIZES = [50, 100, 200, 500];
export const DEFAULT_SIZE = 100;
/** The query parameters that filter (the counts and the selection are about these). */
export const FILTERS = [
  'status',
  'entity',
  'check',
  'silenced',
  'flapping',
  'fieldSelector',
  'labelSelector',
];

export const SORTS = [
  ['severity', 'Severity (worst first)'],
  ['last_change', 'Last change (newest first)'],
  ['last_ok', 'Last OK (oldest first)'],
  ['entity', 'Entity (A to Z)'],
];
export const STATUS_CHOICES = [
  ['', 'any'],
  ['critical', 'critical'],
  ['warning', 'warning'],
  ['unknown', 'unknown'],
  ['passing', 'passing'],
  ['critical,warning,unknown', 'not passing'],
];
const COUNT_LINKS = /** @type {const} */ ([
  ['critical', { status: 'critical' }],
  ['warning', { status: 'warning' }],
  ['unknown', { status: 'unknown' }],
  ['passing', { status: 'passing' }],
  ['silenced', { silenced: 'true' }],
  ['flapping', { flapping: 'true' }],
]);

/** @param {URLSearchParams} p @param {string} k */
export const param = (p, k) => p.get(k) ?? '';

/**
 * A URL of this page with `changes` over the current parameters (page reset).
 * @param {Record<string, string | undefined>} changes
 */
export function withParams(changes) {
  const { path, params } = route.value;
  const p = new URLSearchParams(params);
  p.delete('page');
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '') p.delete(k);
    else p.set(k, v);
  }
  return href(path, p);
}

/** @param {(v: string) => void} set */
export const onValue = (set) => (/** @type {Event} */ e) =>
  set(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.currentTarget).value);

/**
 * A text filter typed into: written to the URL once typing pauses (replacing the history entry).
 * @param {{ name: string, label: string, placeholder?: string }} p
 */
export function TextFilter({ name, label, placeholder }) {
  const current = param(route.value.params, name);
  const [text, setText] = useState(current);
  const typed = useDebounced(text, 300);
  const shown = useRef(current);
  // The URL changed elsewhere (a link, back): show its value.
  useEffect(() => {
    if (current !== shown.current) {
      shown.current = current;
      setText(current);
    }
  }, [current]);
  useEffect(() => {
    if (typed !== shown.current) {
      shown.current = typed;
      setParams({ [name]: typed.trim() || undefined, page: undefined });
    }
  }, [typed]);
  return html`<label
    >${label}
    <input type="search" name=${name} value=${text} placeholder=${placeholder} onInput=${onValue(setText)}
  /></label>`;
}

/**
 * A choice written to the URL at once.
 * @param {{ name: string, label: string, choices: ReadonlyArray<readonly [string, string]> }} p
 */
export function SelectFilter({ name, label, choices }) {
  const current = param(route.value.params, name);
  const known = choices.some(([v]) => v === current);
  return html`<label
    >${label}
    <select
      name=${name}
      value=${current}
      onChange=${onValue((v) => setParams({ [name]: v || undefined, page: undefined }, { replace: false }))}
    >
      ${!known && html`<option value=${current}>${current}</option>`}
      ${choices.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
    </select></label
  >`;
}

/** The selector filters: applied on submit (a half-typed selector is a 400). */
export function SelectorFilters() {
  const params = route.value.params;
  const field = param(params, 'fieldSelector');
  const label = param(params, 'labelSelector');
  const [f, setF] = useState(field);
  const [l, setL] = useState(label);
  useEffect(() => setF(field), [field]);
  useEffect(() => setL(label), [label]);
  /** @param {Event} e */
  const apply = (e) => {
    e.preventDefault();
    setParams(
      { fieldSelector: f.trim() || undefined, labelSelector: l.trim() || undefined, page: undefined },
      { replace: false },
    );
  };
  return html`<details class="selectors-box" open=${!!(field || label)}>
    <summary>Selectors${field || label ? ' (applied)' : ''}</summary>
    <form class="toolbar selectors" onSubmit=${apply} aria-label="Selectors">
      <label class="grow"
        >Field selector
        <input
          name="fieldSelector"
          value=${f}
          placeholder="check.status == 2 && entity.entity_class == agent"
          spellcheck=${false}
          autocomplete="off"
          onInput=${onValue(setF)}
      /></label>
      <label class="grow"
        >Label selector
        <input
          name="labelSelector"
          value=${l}
          placeholder="region == eu"
          spellcheck=${false}
          autocomplete="off"
          onInput=${onValue(setL)}
      /></label>
      <button type="submit">Apply</button>
    </form>
  </details>`;
}

/**
 * The counts above the table; each is a link showing only those events.
 * @param {{ counts: Counts | undefined }} p
 */
export function CountLinks({ counts }) {
  const params = route.value.params;
  const active = (/** @type {Record<string, string>} */ f) =>
    Object.entries(f).every(([k, v]) => params.get(k) === v) &&
    ['status', 'silenced', 'flapping'].filter((k) => !(k in f)).every((k) => !params.get(k));
  const cleared = { status: undefined, silenced: undefined, flapping: undefined };
  const all = !params.get('status') && !params.get('silenced') && !params.get('flapping');
  return html`<ul class="counts event-counts" aria-label="Event counts">
    <li>
      <a href=${withParams(cleared)} class="count-all" aria-current=${all ? 'true' : undefined}
        ><strong>${counts?.total ?? '–'}</strong> all</a
      >
    </li>
    ${COUNT_LINKS.map(
      ([word, f]) =>
        html`<li>
          <a
            href=${withParams({ ...cleared, ...f })}
            class=${`count-${word}`}
            aria-current=${active(f) ? 'true' : undefined}
            ><strong>${counts?.[word] ?? '–'}</strong> ${word}</a
          >
        </li>`,
    )}
  </ul>`;
}

/**
 * Page links: first, previous, where we are, next, last, and the page size.
 * @param {{ page: number, pages: number, size: number }} p
 */
export function Pager({ page, pages, size }) {
  const go = (/** @type {number} */ n) => withParams({ page: n > 1 ? String(n) : undefined });
  const link = (/** @type {number} */ n, /** @type {string} */ text, /** @type {boolean} */ off) =>
    off
      ? html`<span class="pager-off" aria-disabled="true">${text}</span>`
      : html`<a href=${go(n)}>${text}</a>`;
  return html`<nav class="pager" aria-label="Pages">
    ${link(1, 'First', page <= 1)} ${link(page - 1, 'Previous', page <= 1)}
    <span class="pager-where">Page ${Math.min(page, Math.max(pages, 1))} of ${Math.max(pages, 1)}</span>
    ${link(page + 1, 'Next', page >= pages)} ${link(pages, 'Last', page >= pages)}
    <label class="pager-size"
      >Rows per page
      <select
        name="size"
        value=${String(size)}
        onChange=${onValue((v) => setParams({ size: v === String(DEFAULT_SIZE) ? undefined : v, page: undefined }, { replace: false }))}
      >
        ${PAGE_SIZES.map((n) => html`<option value=${String(n)}>${n}</option>`)}
      </select></label
    >
  </nav>`;
}
