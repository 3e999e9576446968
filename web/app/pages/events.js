// @ts-check
import { html } from '../html.js';

/** /events: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function Events(p) {
  return html`<section>
    <h1>Events</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
