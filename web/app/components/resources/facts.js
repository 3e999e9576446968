// @ts-check
import { html } from '../../html.js';

/** `platform_version` → `platform version`. @param {string} key */
const words = (key) => key.replace(/_/g, ' ');

/** An object, or a list holding one: shown below its name rather than beside it. @param {unknown} v */
const nested = (v) =>
  v !== null &&
  typeof v === 'object' &&
  (Array.isArray(v) ? v.some((x) => x !== null && typeof x === 'object') : Object.keys(v).length > 0);

/**
 * Any JSON value as nested term lists: objects as `dl.facts` (what nests goes below its name, so deep
 * values keep the width), lists of plain values as chips, lists of objects one block after another.
 * Values are shown as the API sent them (redacted ones stay `REDACTED`).
 * @param {{ value: unknown }} p
 */
export function Facts({ value }) {
  if (value === null || value === undefined || value === '') return html`<span class="muted">none</span>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">none</span>`;
    if (!nested(value)) return html`<${Chips} items=${value.map(String)} />`;
    return html`<ol class="res-facts-list">
      ${value.map((v) => html`<li><${Facts} value=${v} /></li>`)}
    </ol>`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(/** @type {Record<string, unknown>} */ (value));
    if (entries.length === 0) return html`<span class="muted">none</span>`;
    return html`<dl class="facts res-facts">
      ${entries.map(([k, v]) =>
        nested(v)
          ? html`<dt class="res-nested">${words(k)}</dt>
              <dd class="res-nested"><${Facts} value=${v} /></dd>`
          : html`<dt>${words(k)}</dt>
              <dd><${Facts} value=${v} /></dd>`,
      )}
    </dl>`;
  }
  if (typeof value === 'boolean') return html`<span>${value ? 'yes' : 'no'}</span>`;
  return html`<span>${String(value)}</span>`;
}

/**
 * Plain values as small chips (subscriptions, handlers); `none` when there are none.
 * @param {{ items: readonly string[] | null | undefined, label?: string }} p
 */
export function Chips({ items, label }) {
  if (!items || items.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="res-chips" aria-label=${label ?? ''}>
    ${items.map((i) => html`<li>${i}</li>`)}
  </ul>`;
}

/**
 * Labels or annotations as `key=value` chips.
 * @param {{ map: Record<string, string> | null | undefined, label?: string }} p
 */
export function KeyValues({ map, label }) {
  const entries = Object.entries(map ?? {});
  if (entries.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="res-chips" aria-label=${label ?? ''}>
    ${entries.map(([k, v]) => html`<li><span class="res-key">${k}</span>=${v}</li>`)}
  </ul>`;
}

/**
 * Yes/no in words.
 * @param {{ value: boolean | undefined }} p
 */
export function YesNo({ value }) {
  return value ? html`<span>yes</span>` : html`<span class="muted">no</span>`;
}
