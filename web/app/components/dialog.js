// @ts-check
import { signal } from '@preact/signals';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';

/**
 * A modal dialog (the native `<dialog>`: focus is trapped and Escape closes it).
 * @param {{ title: string, open: boolean, onClose: () => void, children?: unknown, class?: string }} p
 */
export function Dialog({ title, open, onClose, children, class: cls }) {
  const ref = useRef(/** @type {HTMLDialogElement | null} */ (null));
  // In the same commit as the content: with a later effect the emptied dialog stayed open (and focus
  // stayed in it) for a frame, and the opener got its focus back only after that.
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return html`<dialog ref=${ref} class=${cls ?? ''} aria-label=${title} onClose=${onClose}>
    ${
      open &&
      html`<h2>${title}</h2>
        ${children}`
    }
  </dialog>`;
}

/**
 * @typedef {{ title: string, body: string, action: string, danger?: boolean, resolve: (ok: boolean) => void }} Pending
 */
/** @type {import('@preact/signals').Signal<Pending | null>} */
const pending = signal(null);

/**
 * Asks before an action: resolves true when confirmed.
 * @param {{ title: string, body: string, action: string, danger?: boolean }} o
 * @returns {Promise<boolean>}
 */
export function confirm(o) {
  pending.peek()?.resolve(false);
  return new Promise((resolve) => (pending.value = { ...o, resolve }));
}

/** The one confirmation dialog of the page. */
export function Confirmations() {
  const p = pending.value;
  /** @param {boolean} ok */
  const answer = (ok) => {
    pending.value = null;
    p?.resolve(ok);
  };
  return html`<${Dialog} title=${p?.title ?? 'Confirm'} open=${!!p} onClose=${() => p && answer(false)}>
    <p>${p?.body}</p>
    <div class="actions">
      <button type="button" onClick=${() => answer(false)}>Cancel</button>
      <button type="button" class=${p?.danger ? 'danger' : 'primary'} onClick=${() => answer(true)}>
        ${p?.action}
      </button>
    </div>
  <//>`;
}
