// @ts-check
import { html } from '../html.js';

/** @param {number | undefined} status */
export function statusName(status) {
  if (status === 0) return 'passing';
  if (status === 1) return 'warning';
  if (status === 2) return 'critical';
  return 'unknown';
}

/**
 * A check status as a word and a colour (the word is there for those who cannot see the colour).
 * @param {{ status: number | undefined }} p
 */
export function StatusBadge({ status }) {
  const name = statusName(status);
  return html`<span class=${`badge status-${name}`} title=${`status ${status ?? '?'}`}>${name}</span>`;
}

/**
 * "3 min ago" for a Unix time in seconds; the exact time is in the tooltip.
 * @param {{ at: number | undefined }} p
 */
export function Ago({ at }) {
  if (!at) return html`<span class="muted">never</span>`;
  const date = new Date(at * 1000);
  return html`<time datetime=${date.toISOString()} title=${date.toLocaleString()}>${ago(at)}</time>`;
}

/** @param {number} at Unix seconds */
export function ago(at) {
  const s = Math.round(Date.now() / 1000 - at);
  if (s < 0) return 'in the future';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}
