// @ts-check
import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { html } from '../html.js';
import { CORE, all } from '../api/client.js';
import { session, signOut } from '../api/session.js';
import { route, href } from '../router.js';
import { ALL, namespace, setNamespace } from '../namespace.js';
import { useAsync } from '../hooks.js';

/** The main navigation: [path, label]; a page is current when the route starts with its path. */
const NAV = [
  ['/events', 'Events'],
  ['/entities', 'Entities'],
  ['/checks', 'Checks'],
  ['/silences', 'Silences'],
  ['/config', 'Configuration'],
  ['/legacy', 'Legacy'],
];

/**
 * What the current page says about its live stream, shown in the header; null when the page has
 * none. @type {import('@preact/signals').Signal<import('../api/stream.js').StreamState | null>}
 */
export const liveState = signal(null);

const LIVE_WORDS = { connecting: 'connecting…', live: 'live', down: 'reconnecting…' };

/** The namespace picker; Ctrl+K (⌘K) focuses it from anywhere. */
function NamespaceSwitcher() {
  const ref = useRef(/** @type {HTMLSelectElement | null} */ (null));
  const list = useAsync((signal) => all(`${CORE}/namespaces`, { signal }), []);
  useEffect(() => {
    /** @param {KeyboardEvent} e */
    const onKey = (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        ref.current?.focus();
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  const names = /** @type {Array<{ name: string }>} */ (list.data ?? []).map((n) => n.name);
  const current = namespace.value;
  if (!names.includes(current) && current !== ALL) names.push(current);
  return html`<label class="ns">
    <span class="visually-hidden">Namespace (Ctrl+K)</span>
    <select
      ref=${ref}
      title="Namespace (Ctrl+K)"
      value=${current}
      onChange=${(/** @type {Event} */ e) => setNamespace(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}
    >
      ${names.sort().map((n) => html`<option value=${n}>${n}</option>`)}
      <option value=${ALL}>all namespaces</option>
    </select>
  </label>`;
}

/**
 * The frame of every signed-in page: navigation, namespace, live indicator, user and sign out.
 * @param {{ children?: unknown }} p
 */
export function Layout({ children }) {
  const path = route.value.path;
  const live = liveState.value;
  const ns = namespace.value;
  return html`<div class="frame">
    <a
      class="skip"
      href="#main"
      onClick=${(/** @type {Event} */ e) => {
        e.preventDefault();
        document.getElementById('main')?.focus();
      }}
      >Skip to content</a
    >
    <header class="top">
      <a class="brand" href=${href('/events', { namespace: ns })}>monitor</a>
      <nav aria-label="Main">
        <ul>
          ${NAV.map(
            ([p, label]) =>
              html`<li>
                <a
                  href=${href(/** @type {string} */ (p), { namespace: ns })}
                  aria-current=${path.startsWith(/** @type {string} */ (p)) ? 'page' : undefined}
                  >${label}</a
                >
              </li>`,
          )}
        </ul>
      </nav>
      <div class="tools">
        ${
          live &&
          html`<span
            class=${`live live-${live}`}
            role="status"
            aria-label=${`Live updates: ${LIVE_WORDS[live]}`}
          >
            <span class="dot" aria-hidden="true"></span>${LIVE_WORDS[live]}
          </span>`
        }
        <${NamespaceSwitcher} />
        <span class="user" title="Signed in as">${session.value?.username}</span>
        <button type="button" onClick=${() => void signOut()}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1">${children}</main>
  </div>`;
}
