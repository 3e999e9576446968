// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../../html.js';
import { json, nsPath } from '../../api/client.js';
import { messageOf } from '../../api/errors.js';
import { Dialog } from '../dialog.js';
import { notify } from '../notices.js';

/**
 * A core/v2 check configuration, the fields the pages show.
 * @typedef {{
 *   metadata: { name: string, namespace: string, labels?: Record<string, string>, annotations?: Record<string, string>, created_by?: string },
 *   command?: string,
 *   interval?: number,
 *   cron?: string,
 *   subscriptions?: string[] | null,
 *   publish?: boolean,
 *   round_robin?: boolean,
 *   ttl?: number,
 *   timeout?: number,
 *   handlers?: string[] | null,
 *   proxy_entity_name?: string,
 * }} Check
 */

/**
 * @param {string} ns
 * @param {string} name
 */
export const checkPath = (ns, name) => `${nsPath(ns, 'checks')}/${encodeURIComponent(name)}`;

/**
 * Asks to run a check now (`POST …/checks/<name>/execute`): to its own subscriptions or to others
 * given here, with a reason. The dialog is the confirmation; the result is a notice, a refusal is
 * shown in the dialog.
 * @param {{ check: Check | null, onClose: () => void }} p
 */
export function RunCheckDialog({ check, onClose }) {
  return html`<${Dialog}
    title=${check ? `Run check ${check.metadata.name} now` : 'Run check'}
    open=${!!check}
    onClose=${onClose}
    class="res-dialog"
  >
    ${check && html`<${RunForm} check=${check} onClose=${onClose} />`}
  <//>`;
}

/** @param {{ check: Check, onClose: () => void }} p */
function RunForm({ check, onClose }) {
  const [subs, setSubs] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const own = (check.subscriptions ?? []).join(', ');

  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    const subscriptions = subs
      .split(/[,\s]+/)
      .map((s) => s.trim())
      .filter(Boolean);
    try {
      /** @type {{ issued: number }} */
      const res = await json(`${checkPath(check.metadata.namespace, check.metadata.name)}/execute`, {
        method: 'POST',
        body: {
          ...(subscriptions.length ? { subscriptions } : {}),
          ...(reason.trim() ? { reason: reason.trim() } : {}),
        },
      });
      const when = res?.issued ? new Date(res.issued * 1000).toLocaleTimeString() : 'now';
      notify(
        'ok',
        `Check ${check.metadata.name} requested at ${when} for ${
          subscriptions.length ? subscriptions.join(', ') : own || 'its subscriptions'
        }`,
      );
      onClose();
    } catch (err) {
      setError(`The check was not requested: ${messageOf(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return html`<form onSubmit=${submit} class="res-form" novalidate>
    <p>
      ${'Agents of '}${own ? html`<strong>${own}</strong>` : 'its subscriptions'}${' run '}<code>${check.command}</code>${` once, now${check.round_robin ? ' (one agent per subscription: round robin)' : ''}.`}
    </p>
    <label
      >Other subscriptions (comma separated; empty: the check's own)
      <input
        value=${subs}
        placeholder=${own}
        autocomplete="off"
        onInput=${(/** @type {Event} */ e) =>
          setSubs(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
      />
    </label>
    <label
      >Reason
      <input
        value=${reason}
        autocomplete="off"
        onInput=${(/** @type {Event} */ e) =>
          setReason(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
      />
    </label>
    ${error && html`<p class="error-text" role="alert">${error}</p>`}
    <div class="actions">
      <button type="button" onClick=${onClose}>Cancel</button>
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Requesting…' : 'Run now'}</button>
    </div>
  </form>`;
}
