// @ts-check
import { html } from '../html.js';

/** /entities/:name: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function EntityDetail(p) {
  return html`<section>
    <h1>EntityDetail</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
