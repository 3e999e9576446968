// @ts-check
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { href, pathOf } from '../../router.js';
import { checkOf, entityOf, nsOf, silencedByOf } from './api.js';

/** @typedef {import('./api.js').MonitorEvent} MonitorEvent */

/**
 * When the current status began: the executed time of the oldest entry of the history's last run
 * of equal statuses (the server sorts `last_change` by the same rule).
 * @param {MonitorEvent} e
 */
export function lastChangeOf(e) {
  const c = e.check ?? {};
  const status = c.status ?? 0;
  const h = c.history ?? [];
  let at = c.executed ?? 0;
  for (let i = h.length - 1; i >= 0 && h[i]?.status === status; i--)
    at = /** @type {number} */ (h[i]?.executed);
  return at;
}

/** The first line of the output, for a table cell. @param {MonitorEvent} e */
export const outputLine = (e) => (e.check?.output ?? '').split('\n').find((l) => l.trim() !== '') ?? '';

/** The detail page of an event. @param {MonitorEvent} e */
export const detailHref = (e) => href(pathOf('/events', entityOf(e), checkOf(e)), { namespace: nsOf(e) });

/**
 * Small words beside the status: flapping, silenced.
 * @param {{ event: MonitorEvent }} p
 */
export function EventFlags({ event }) {
  const by = silencedByOf(event);
  const flapping = event.check?.state === 'flapping';
  return html`${flapping && html` <span class="badge flag-flapping" title="The check is flapping">flapping</span>`}${
    by.length > 0 &&
    html` <span class="badge flag-silenced" title=${`Silenced by ${by.join(', ')}`}>silenced</span>`
  }`;
}

/**
 * Draws the page again every `ms`, so "3 min ago" stays true on a page left open (the page's data
 * comes from the stream; this asks the API for nothing).
 * @param {number} [ms]
 */
export function useClock(ms = 30_000) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
}
