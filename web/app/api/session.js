// @ts-check
import { effect, signal } from '@preact/signals';
import { ApiError, errorOf } from './errors.js';

/**
 * @typedef {{ access_token: string, refresh_token: string, expires_at: number }} Tokens
 * @typedef {{ username: string, tokens: Tokens, obtained?: number }} Session
 */

const STORE = 'monitor.session';
/**
 * Tokens are refreshed this long before they expire, so no request carries an expired one; a third
 * of their lifetime when that is shorter (a backend with short-lived tokens).
 */
const REFRESH_AHEAD_MS = 30_000;

/**
 * When a session's tokens are due for a refresh (ms since the epoch).
 * @param {Session} s
 */
function refreshAt(s) {
  const expires = s.tokens.expires_at * 1000;
  const lifetime = expires - (s.obtained ?? expires - 3 * REFRESH_AHEAD_MS);
  return expires - Math.min(REFRESH_AHEAD_MS, lifetime / 3);
}

/** @returns {Session | null} */
function stored() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE) ?? 'null');
    return s && typeof s.username === 'string' && s.tokens && typeof s.tokens.access_token === 'string'
      ? s
      : null;
  } catch {
    return null;
  }
}

/** The signed-in user and tokens, kept across reloads; null shows the sign-in page. */
export const session = signal(stored());

/** @param {Session | null} s */
function keep(s) {
  session.value = s;
  try {
    if (s) localStorage.setItem(STORE, JSON.stringify(s));
    else localStorage.removeItem(STORE);
  } catch {
    /* private mode: the session lasts as long as the page */
  }
}

// Another tab signing in or out shows here too.
addEventListener('storage', (e) => {
  if (e.key === STORE) session.value = stored();
});

/** @param {string} s */
const base64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

/**
 * `/auth` with Basic credentials: local users and users of an LDAP/AD provider alike.
 * @param {string} username
 * @param {string} password
 */
export async function signIn(username, password) {
  const res = await fetch('/auth', {
    headers: { Authorization: `Basic ${base64(`${username}:${password}`)}` },
  });
  if (!res.ok) throw await errorOf(res);
  keep({ username, tokens: await res.json(), obtained: Date.now() });
}

/**
 * The logins the backend offers besides passwords: its OIDC providers, each with the route that
 * starts its sign-in (docs/compatibility.md#oidc).
 * @returns {Promise<Array<{ name: string, authorize: string }>>}
 */
export async function oidcProviders() {
  const res = await fetch('/auth/methods');
  if (!res.ok) throw await errorOf(res);
  const body = await res.json();
  return Array.isArray(body.oidc) ? body.oidc : [];
}

/**
 * Finishes an OIDC sign-in: the one-time key the backend's callback put in the URL is traded for
 * the tokens (the backend checks it against this browser's cookie).
 * @param {string} handoff
 */
export async function completeOidc(handoff) {
  const res = await fetch('/api/enterprise/authentication/v2/oidc/handoff', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ handoff }),
  });
  if (!res.ok) throw await errorOf(res);
  const { username, ...tokens } = await res.json();
  keep({ username, tokens, obtained: Date.now() });
}

/** Ends the session here and on the backend (its refresh token is revoked). */
export async function signOut() {
  const s = session.peek();
  keep(null);
  if (!s) return;
  await fetch('/auth/logout', {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.tokens.access_token}` },
  }).catch(() => {});
}

/** Forgets the session without asking the backend (it said the tokens are no good). */
export function dropSession() {
  keep(null);
}

/** @type {Promise<void> | undefined} */
let refreshing;

/** @param {Session} s */
async function refresh(s) {
  const res = await fetch('/auth/token', {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.tokens.access_token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ refresh_token: s.tokens.refresh_token }),
  });
  if (res.status === 401 || res.status === 400) {
    keep(null);
    throw await errorOf(res);
  }
  if (!res.ok) throw await errorOf(res);
  keep({ username: s.username, tokens: await res.json(), obtained: Date.now() });
}

/**
 * A valid access token, refreshed first when it expires soon (one refresh at a time).
 * @returns {Promise<string>}
 */
export async function accessToken() {
  let s = session.peek();
  if (!s) throw new ApiError(401, 'signed out');
  if (Date.now() >= refreshAt(s)) {
    refreshing ??= refresh(s).finally(() => (refreshing = undefined));
    await refreshing;
    s = session.peek();
    if (!s) throw new ApiError(401, 'signed out');
  }
  return s.tokens.access_token;
}

// A page left open (following a live stream, making no request) stays signed in: the tokens are
// refreshed ahead of their expiry as if a request were due, for as long as the refresh token lasts.
effect(() => {
  const s = session.value;
  if (!s) return;
  const due = Math.max(1000, refreshAt(s) - Date.now());
  const timer = setTimeout(() => void accessToken().catch(() => {}), due);
  return () => clearTimeout(timer);
});
