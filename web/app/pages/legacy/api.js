// @ts-check
import { ApiError, messageOf } from '../../api/errors.js';

/**
 * The legacy API's views on the API port (docs/compatibility.md#the-legacy-views-on-the-api-port):
 * the legacy routes behind the REST API's token and RBAC, answering the legacy bodies.
 */
export const LEGACY = '/api/legacy';

/** @typedef {{ enabled: true, namespace: string } | { enabled: false }} LegacyState */

/**
 * A legacy path from parts, each percent-encoded (a stash path's slashes too).
 * @param {...string} parts
 */
export const legacyPath = (...parts) => [LEGACY, ...parts.map(encodeURIComponent)].join('/');

/**
 * Words for a failed legacy call: its bare 404 means the thing is gone; the REST API's refusals
 * (403, 401) carry their own message.
 * @param {unknown} err
 * @param {string} what e.g. "client web-01"
 */
export function legacyMessage(err, what) {
  if (err instanceof ApiError && err.status === 404 && /^404\b/.test(err.message))
    return `${what} does not exist (any more)`;
  return messageOf(err);
}
