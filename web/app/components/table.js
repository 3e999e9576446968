// @ts-check
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';

/**
 * @template R
 * @typedef {{
 *   key: string,
 *   label: string,
 *   render: (row: R) => unknown,
 *   sort?: string,
 *   class?: string,
 * }} Column
 */

/** Rows drawn above and below the visible ones, so a fast scroll shows no gap. */
const OVERSCAN = 10;
/**
 * Every row has this height (px, as in app.css `.grid tr`): the window is worked out from it.
 * @public (for pages that place or count rows)
 */
export const ROW_HEIGHT = 36;

/**
 * A table that draws only the rows in view (10,000 rows scroll as smoothly as 10), with optional
 * selection checkboxes and sortable headers (`sort` is the active sort key, `onSort` sets it).
 * @template R
 * @param {{
 *   label: string,
 *   columns: Column<R>[],
 *   rows: R[],
 *   rowKey: (row: R) => string,
 *   rowLabel?: (row: R) => string,
 *   selected?: Set<string>,
 *   onSelect?: (next: Set<string>) => void,
 *   onOpen?: (row: R) => void,
 *   sort?: string,
 *   onSort?: (key: string) => void,
 *   empty?: string,
 * }} p
 */
export function Table(p) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [view, setView] = useState({ top: 0, height: 800 });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const update = () => setView({ top: el.scrollTop, height: el.clientHeight || 800 });
    update();
    el.addEventListener('scroll', update, { passive: true });
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => {
      el.removeEventListener('scroll', update);
      ro.disconnect();
    };
  }, []);

  const first = Math.max(0, Math.floor(view.top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(p.rows.length, Math.ceil((view.top + view.height) / ROW_HEIGHT) + OVERSCAN);
  const shown = p.rows.slice(first, last);
  const sel = p.selected;
  const allSelected = !!sel && p.rows.length > 0 && p.rows.every((r) => sel.has(p.rowKey(r)));
  const cols = p.columns.length + (sel ? 1 : 0);

  /** @param {string} key */
  const toggle = (key) => {
    if (!sel || !p.onSelect) return;
    const next = new Set(sel);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    p.onSelect(next);
  };

  return html`<div class="grid-box" ref=${box} tabindex="-1">
    <table class="grid" aria-label=${p.label} aria-rowcount=${p.rows.length + 1}>
      <thead>
        <tr>
          ${
            sel &&
            html`<th class="pick">
              <input
                type="checkbox"
                aria-label="Select all"
                checked=${allSelected}
                onChange=${() => p.onSelect?.(allSelected ? new Set() : new Set(p.rows.map(p.rowKey)))}
              />
            </th>`
          }
          ${p.columns.map((c) => {
            if (!c.sort || !p.onSort) return html`<th scope="col" class=${c.class ?? ''}>${c.label}</th>`;
            const active = p.sort === c.sort;
            return html`<th scope="col" class=${c.class ?? ''} aria-sort=${active ? 'descending' : 'none'}>
              <button
                type="button"
                class="link sort"
                onClick=${() => p.onSort?.(/** @type {string} */ (c.sort))}
              >
                ${c.label}${active ? ' ▾' : ''}
              </button>
            </th>`;
          })}
        </tr>
      </thead>
      <tbody>
        ${
          first > 0 &&
          html`<tr class="spacer" aria-hidden="true" style=${{ height: `${first * ROW_HEIGHT}px` }}>
            <td colspan=${cols}></td>
          </tr>`
        }
        ${shown.map((r, i) => {
          const key = p.rowKey(r);
          return html`<tr key=${key} aria-rowindex=${first + i + 2} class=${sel?.has(key) ? 'picked' : ''}>
            ${
              sel &&
              html`<td class="pick">
                <input
                  type="checkbox"
                  aria-label=${`Select ${p.rowLabel ? p.rowLabel(r) : key}`}
                  checked=${sel.has(key)}
                  onChange=${() => toggle(key)}
                />
              </td>`
            }
            ${p.columns.map((c) => html`<td class=${c.class ?? ''}>${c.render(r)}</td>`)}
          </tr>`;
        })}
        ${
          last < p.rows.length &&
          html`<tr
            class="spacer"
            aria-hidden="true"
            style=${{ height: `${(p.rows.length - last) * ROW_HEIGHT}px` }}
          >
            <td colspan=${cols}></td>
          </tr>`
        }
      </tbody>
    </table>
    ${p.rows.length === 0 && html`<p class="empty">${p.empty ?? 'Nothing to show.'}</p>`}
  </div>`;
}
