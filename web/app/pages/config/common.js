// @ts-check
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { notify } from '../../components/notices.js';
import { messageOf } from '../../api/errors.js';
import { route, setParams } from '../../router.js';
import { useDebounced } from '../../hooks.js';

// Small pieces the configuration and legacy pages share: labels, values shown as text, a JSON
// block with a copy button, and a text filter kept in the URL.

/**
 * A value as one line of text: lists joined, objects as JSON, nothing as ''.
 * @param {unknown} v
 * @returns {string}
 */
export function text(v) {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(text).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * Labels as `key=value` chips (the whole set in the tooltip).
 * @param {{ labels: Record<string, string> | null | undefined }} p
 */
export function Labels({ labels }) {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (!entries.length) return html`<span class="muted">none</span>`;
  const all = entries.map(([k, v]) => `${k}=${v}`);
  return html`<span class="cfg-labels" title=${all.join('\n')}>
    ${all.map((l) => html`<span class="cfg-label">${l}</span>`)}
  </span>`;
}

/**
 * Copies `value` to the clipboard and says so; when the browser refuses, says that too.
 * @param {{ value: string, label: string }} p `label` names what is copied ("Copy JSON of handler slack")
 */
function CopyButton({ value, label }) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      notify('ok', 'Copied to the clipboard');
    } catch (err) {
      notify('error', `Could not copy (${messageOf(err)}): select the text and copy it`);
    }
  };
  return html`<button type="button" aria-label=${label} onClick=${copy}>Copy</button>`;
}

/**
 * A whole definition as indented JSON, with a copy button; the block scrolls and takes focus, so
 * keyboard users can scroll it too.
 * @param {{ value: unknown, title: string, id?: string }} p
 */
export function JsonView({ value, title, id }) {
  const json = JSON.stringify(value, null, 2);
  return html`<div class="cfg-json">
    <div class="cfg-json-head">
      <h2 id=${id}>${title}</h2>
      <${CopyButton} value=${json} label=${`Copy ${title}`} />
    </div>
    <pre role="region" tabindex="0" aria-label=${title}>${json}</pre>
  </div>`;
}

/**
 * A text input whose value lives in the URL parameter `param` (written a moment after typing stops,
 * replacing the history entry), so a filtered view is a link.
 * @param {{ param: string, label: string, placeholder?: string, hint?: string, type?: string }} p
 */
export function UrlFilter({ param, label, placeholder, hint, type }) {
  const inUrl = route.value.params.get(param) ?? '';
  const [value, setValue] = useState(inUrl);
  const settled = useDebounced(value, 250);
  // The URL changed by other means (back, a link): the input follows it.
  useEffect(() => setValue(inUrl), [inUrl]);
  useEffect(() => {
    if (settled !== inUrl) setParams({ [param]: settled.trim() || undefined });
    // Only a settled value writes the URL, not the URL changing under it.
  }, [settled]);
  return html`<label class=${type === 'number' ? 'cfg-narrow' : 'grow'}
    >${label}
    <input
      type=${type ?? 'search'}
      min=${type === 'number' ? '0' : undefined}
      name=${param}
      value=${value}
      placeholder=${placeholder ?? ''}
      title=${hint ?? ''}
      onInput=${(/** @type {Event} */ e) => setValue(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
  /></label>`;
}

/**
 * Items whose `name` holds `needle`, ignoring case.
 * @template T
 * @param {T[]} items
 * @param {(t: T) => string} nameOf
 * @param {string} needle
 */
export function byName(items, nameOf, needle) {
  const n = needle.trim().toLowerCase();
  return n ? items.filter((i) => nameOf(i).toLowerCase().includes(n)) : items;
}
