// @ts-check
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { useDebounced } from '../../hooks.js';
import { route, setParams } from '../../router.js';

/**
 * A query parameter of the current page ('' when absent).
 * @param {string} name
 */
export function param(name) {
  return route.value.params.get(name) ?? '';
}

/**
 * A text filter kept in the URL: typed freely, written to the URL once still for 300 ms (replacing
 * the history entry), and following the URL when it changes otherwise (back, a link).
 * @param {{ name: string, label: string, placeholder?: string, hint?: string, grow?: boolean }} p
 */
export function FilterText({ name, label, placeholder, hint, grow }) {
  const inUrl = param(name);
  const [value, setValue] = useState(inUrl);
  const written = useRef(inUrl);
  const still = useDebounced(value, 300);
  useEffect(() => {
    if (still === written.current) return;
    written.current = still;
    setParams({ [name]: still.trim() || undefined });
  }, [still]);
  useEffect(() => {
    if (inUrl === written.current.trim()) return;
    written.current = inUrl;
    setValue(inUrl);
  }, [inUrl]);
  return html`<label class=${grow ? 'grow' : ''}>
    ${label}
    <input
      type="search"
      value=${value}
      placeholder=${placeholder ?? ''}
      title=${hint ?? ''}
      onInput=${(/** @type {Event} */ e) => setValue(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
    />
  </label>`;
}

/**
 * A choice kept in the URL, written at once.
 * @param {{ name: string, label: string, options: Array<[string, string]> }} p  options: [value, words]; '' is "any"
 */
export function FilterSelect({ name, label, options }) {
  return html`<label>
    ${label}
    <select
      value=${param(name)}
      onChange=${(/** @type {Event} */ e) =>
        setParams({ [name]: /** @type {HTMLSelectElement} */ (e.currentTarget).value || undefined })}
    >
      ${options.map(([v, words]) => html`<option value=${v}>${words}</option>`)}
    </select>
  </label>`;
}

/**
 * A field selector clause for what a person typed, or undefined when empty. The API's selectors
 * split on `&&` and cannot quote it, so a value holding it is refused here in words.
 * @param {string} value
 * @param {(v: string) => string} clause
 */
export function clauseOf(value, clause) {
  const v = value.trim();
  if (!v) return undefined;
  if (v.includes('&&') || /[()"',]/.test(v))
    throw new Error(`"${v}" cannot be searched for: names hold letters, digits, "_", ".", "-" and ":"`);
  return clause(v);
}

/**
 * The `fieldSelector` of several clauses (undefined ones left out), or undefined.
 * @param {Array<string | undefined>} clauses
 */
export function joinClauses(clauses) {
  const kept = clauses.filter((c) => c !== undefined);
  return kept.length ? kept.join(' && ') : undefined;
}
