// @ts-check
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { messageOf } from '../api/errors.js';
import { completeOidc, oidcProviders, signIn } from '../api/session.js';
import { DEFAULT_PATH, navigate, route } from '../router.js';

/**
 * Sign in with a local user or a user of an LDAP/AD provider (both go through `/auth`), or through
 * an OIDC provider: its button leaves for the provider, which sends the browser back to
 * `#/signin?oidc_handoff=…` (or `oidc_error=…`) (docs/compatibility.md#oidc).
 */
export function SignIn() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState(/** @type {Array<{ name: string, authorize: string }>} */ ([]));

  useEffect(() => {
    oidcProviders()
      .then(setProviders)
      .catch(() => setProviders([]));
    const { path, params } = route.peek();
    if (path !== '/signin') return;
    const [handoff, failed] = [params.get('oidc_handoff'), params.get('oidc_error')];
    if (failed) {
      setError(failed);
      navigate('/signin', undefined, { replace: true });
    }
    if (!handoff) return;
    setBusy(true);
    completeOidc(handoff)
      .then(() => navigate(DEFAULT_PATH, undefined, { replace: true }))
      .catch((/** @type {unknown} */ err) => {
        setError(messageOf(err));
        navigate('/signin', undefined, { replace: true });
      })
      .finally(() => setBusy(false));
  }, []);

  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(username, password);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  /** @param {(v: string) => void} set */
  const onInput = (set) => (/** @type {Event} */ e) =>
    set(/** @type {HTMLInputElement} */ (e.currentTarget).value);

  return html`<main class="signin" id="main">
    <form onSubmit=${submit} aria-labelledby="signin-title">
      <h1 id="signin-title">monitor</h1>
      <p class="muted">Sign in with your user or directory account.</p>
      <label
        >Username
        <input
          name="username"
          autocomplete="username"
          required
          value=${username}
          onInput=${onInput(setUsername)}
      /></label>
      <label
        >Password
        <input
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value=${password}
          onInput=${onInput(setPassword)}
      /></label>
      ${error && html`<p class="error-text" role="alert">${error}</p>`}
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
      ${providers.map(
        (p) => html`<a class="button oidc" href=${p.authorize} key=${p.name}>Sign in with ${p.name}</a>`,
      )}
    </form>
  </main>`;
}
