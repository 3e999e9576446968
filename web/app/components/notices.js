// @ts-check
import { signal } from '@preact/signals';
import { html } from '../html.js';
import { messageOf } from '../api/errors.js';

/** @typedef {{ id: number, kind: 'ok' | 'error' | 'info', text: string }} Notice */

/** @type {import('@preact/signals').Signal<Notice[]>} */
const notices = signal([]);
let next = 0;

/**
 * Shows the result of an action for a few seconds (errors stay until dismissed).
 * @param {Notice['kind']} kind
 * @param {string} text
 */
export function notify(kind, text) {
  const id = ++next;
  notices.value = [...notices.value, { id, kind, text }];
  if (kind !== 'error') setTimeout(() => dismiss(id), 6000);
}

/** @param {number} id */
const dismiss = (id) => (notices.value = notices.value.filter((n) => n.id !== id));

/**
 * Runs the actions of a bulk operation one by one and reports how many succeeded and the first errors.
 * @param {string} what e.g. "resolved"
 * @param {Array<() => Promise<unknown>>} actions
 * @returns {Promise<number>} how many succeeded
 */
export async function runAll(what, actions) {
  let ok = 0;
  /** @type {string[]} */
  const failed = [];
  for (const act of actions) {
    try {
      await act();
      ok++;
    } catch (err) {
      failed.push(messageOf(err));
    }
  }
  if (failed.length)
    notify('error', `${ok} ${what}, ${failed.length} failed: ${[...new Set(failed)].slice(0, 3).join('; ')}`);
  else notify('ok', `${ok} ${what}`);
  return ok;
}

/** The notices area: a polite live region, so screen readers hear every result. */
export function Notices() {
  return html`<div class="notices" role="status" aria-live="polite">
    ${notices.value.map(
      (n) =>
        html`<div class="notice notice-${n.kind}" key=${n.id}>
          <span>${n.text}</span>
          <button type="button" class="link" aria-label="Dismiss" onClick=${() => dismiss(n.id)}>×</button>
        </div>`,
    )}
  </div>`;
}

/**
 * An error in place of a page's content: always words, never a blank page.
 * @param {{ error: unknown, retry?: () => void }} p
 */
export function ErrorMessage({ error, retry }) {
  return html`<div class="error-box" role="alert">
    <strong>Something went wrong.</strong> <span>${messageOf(error)}</span>
    ${retry && html` <button type="button" onClick=${retry}>Try again</button>`}
  </div>`;
}
