// @ts-check
import { html } from '../../html.js';

/** Units of a duration, largest first: what `parseDuration` reads and `formatDuration` writes. */
const UNITS = /** @type {const} */ ([
  ['d', 86400],
  ['h', 3600],
  ['m', 60],
  ['s', 1],
]);

/**
 * Seconds from a duration a person types: `3600`, `90s`, `15m`, `2h`, `1d`, `1h30m`, `1h 30m`.
 * Empty is undefined (no duration); anything else unreadable is NaN.
 * @param {string} text
 * @returns {number | undefined}
 */
export function parseDuration(text) {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (/^\d+$/.test(t)) return Number(t);
  const parts = t.replace(/\s+/g, '');
  if (!/^(\d+[dhms])+$/.test(parts)) return NaN;
  let total = 0;
  for (const m of parts.matchAll(/(\d+)([dhms])/g)) {
    const unit = UNITS.find(([u]) => u === m[2]);
    total += Number(m[1]) * (unit ? unit[1] : 0);
  }
  return total;
}

/**
 * `1h 30m` for 5400 seconds; `0s` for 0.
 * @param {number} seconds
 */
export function formatDuration(seconds) {
  let left = Math.max(0, Math.round(seconds));
  if (left === 0) return '0s';
  /** @type {string[]} */
  const out = [];
  for (const [u, n] of UNITS) {
    if (left >= n) {
      out.push(`${Math.floor(left / n)}${u}`);
      left %= n;
    }
  }
  return out.join(' ');
}

/**
 * "3 min ago" or "in 2 h" for a Unix time in seconds.
 * @param {number} at
 */
function relative(at) {
  const s = Math.round(at - Date.now() / 1000);
  const a = Math.abs(s);
  const words =
    a < 60
      ? `${a} s`
      : a < 3600
        ? `${Math.floor(a / 60)} min`
        : a < 86400
          ? `${Math.floor(a / 3600)} h`
          : `${Math.floor(a / 86400)} d`;
  return s > 0 ? `in ${words}` : `${words} ago`;
}

/**
 * A Unix time (seconds) as a relative phrase, the exact local time in the tooltip; `none` when unset.
 * @param {{ at: number | undefined, none?: string }} p
 */
export function When({ at, none = 'never' }) {
  if (!at || at <= 0) return html`<span class="muted">${none}</span>`;
  const date = new Date(at * 1000);
  return html`<time datetime=${date.toISOString()} title=${date.toLocaleString()}>${relative(at)}</time>`;
}

/**
 * The value of an `<input type="datetime-local">` for a Unix time (local time, to the minute).
 * @param {number | undefined} at
 */
export function toLocalInput(at) {
  if (!at || at <= 0) return '';
  const d = new Date(at * 1000);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * Unix seconds from an `<input type="datetime-local">` value (read as local time); undefined when empty.
 * @param {string} value
 */
export function fromLocalInput(value) {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? NaN : Math.floor(ms / 1000);
}
