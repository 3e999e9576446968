// @ts-check
import { html } from '../html.js';

/** /silences: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function Silences(p) {
  return html`<section>
    <h1>Silences</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
