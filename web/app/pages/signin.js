// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { messageOf } from '../api/errors.js';
import { signIn } from '../api/session.js';

/** Sign in with a local user or a user of an LDAP/AD provider (both go through `/auth`). */
export function SignIn() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);

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
    </form>
  </main>`;
}
