// @ts-check
import { html } from '../html.js';

/** /events/:entity/:check: not built yet. @param {{ params: Record<string, string> }} p */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function EventDetail(p) {
  return html`<section>
    <h1>EventDetail</h1>
    <p class="muted">This page is being built.</p>
  </section>`;
}
