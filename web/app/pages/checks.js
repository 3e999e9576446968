// @ts-check
import { html } from '../html.js';

/** /checks: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function Checks(p) {
  return html`<section>
    <h1>Checks</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
