// @ts-check
import { html } from '../html.js';

/** /entities: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function Entities(p) {
  return html`<section>
    <h1>Entities</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
