// @ts-check
import { html } from '../html.js';

/** /legacy: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function Legacy(p) {
  return html`<section>
    <h1>Legacy</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
