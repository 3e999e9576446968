// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../../html.js';
import { json, nsPath } from '../../api/client.js';
import { messageOf } from '../../api/errors.js';
import { Dialog } from '../dialog.js';
import { notify } from '../notices.js';
import { formatDuration, fromLocalInput, parseDuration, toLocalInput } from './time.js';

/**
 * A core/v2 silenced entry, as the API answers it.
 * @typedef {{
 *   metadata: { name: string, namespace: string, labels?: Record<string, string>, annotations?: Record<string, string>, created_by?: string },
 *   subscription?: string,
 *   check?: string,
 *   creator?: string,
 *   reason?: string,
 *   begin?: number,
 *   expire?: number,
 *   expire_at?: number,
 *   expire_on_resolve?: boolean,
 * }} Silence
 */

/**
 * `<subscription|*>:<check|*>`, the name the API gives an entry.
 * @param {{ subscription?: string, check?: string }} s
 */
const silenceName = (s) => `${s.subscription || '*'}:${s.check || '*'}`;

/** @param {string} ns @param {string} name */
export const silencePath = (ns, name) => `${nsPath(ns, 'silenced')}/${encodeURIComponent(name)}`;

/**
 * What an entry silences, in words.
 * @param {{ subscription?: string, check?: string }} s
 */
export function silenceWords(s) {
  const who = s.subscription
    ? s.subscription.startsWith('entity:')
      ? `entity ${s.subscription.slice('entity:'.length)}`
      : `subscription ${s.subscription}`
    : 'every entity';
  return `${s.check ? `check ${s.check}` : 'every check'} on ${who}`;
}

/**
 * @typedef {{
 *   open: boolean,
 *   onClose: () => void,
 *   onSaved?: () => void,
 *   namespace: string,
 *   entry?: Silence,
 *   preset?: { subscription?: string, check?: string },
 *   title?: string,
 * }} SilenceDialogProps
 */

/**
 * Creates a silenced entry (optionally preset: an entity's `entity:<name>`, a check), or edits one
 * (`entry`: its subscription and check name it, so they stay; reason, start, expiry and expire on
 * resolve change). The API's refusal is shown in the dialog, which stays open.
 * @param {SilenceDialogProps} p
 */
export function SilenceDialog(p) {
  const title = p.title ?? (p.entry ? `Edit silence ${p.entry.metadata.name}` : 'New silence');
  return html`<${Dialog} title=${title} open=${p.open} onClose=${p.onClose} class="res-dialog">
    <${SilenceForm} ...${p} />
  <//>`;
}

/** @param {(v: string) => void} set */
const onText = (set) => (/** @type {Event} */ e) =>
  set(/** @type {HTMLInputElement} */ (e.currentTarget).value);

/** The form, mounted each time the dialog opens, so it starts from the entry or the preset. @param {SilenceDialogProps} p */
function SilenceForm(p) {
  const e = p.entry;
  const askNamespace = !e && p.namespace === '*';
  const [ns, setNs] = useState(e?.metadata.namespace ?? (p.namespace === '*' ? 'default' : p.namespace));
  const [subscription, setSubscription] = useState(e?.subscription ?? p.preset?.subscription ?? '');
  const [check, setCheck] = useState(e?.check ?? p.preset?.check ?? '');
  const [reason, setReason] = useState(e?.reason ?? '');
  const beginShown = toLocalInput(e?.begin);
  const [begin, setBegin] = useState(beginShown);
  const [expire, setExpire] = useState(e && e.expire && e.expire > 0 ? formatDuration(e.expire) : '');
  const [onResolve, setOnResolve] = useState(!!e?.expire_on_resolve);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);

  /** @param {Event} ev */
  const submit = async (ev) => {
    ev.preventDefault();
    setError(null);
    const seconds = parseDuration(expire);
    if (seconds !== undefined && Number.isNaN(seconds)) {
      setError(`"${expire}" is not a duration: write seconds (3600) or 30m, 2h, 1d, 1h30m`);
      return;
    }
    // An unchanged start keeps the entry's exact second (the input shows minutes only).
    const at = e && begin === beginShown ? e.begin : fromLocalInput(begin);
    if (at !== undefined && Number.isNaN(at)) {
      setError(`"${begin}" is not a date and time`);
      return;
    }
    const sub = subscription.trim();
    const chk = check.trim();
    /** @type {Record<string, unknown>} */
    const body = {
      metadata: {
        ...(e
          ? { name: e.metadata.name, labels: e.metadata.labels, annotations: e.metadata.annotations }
          : {}),
        namespace: ns.trim(),
      },
      ...(sub ? { subscription: sub } : {}),
      ...(chk ? { check: chk } : {}),
      reason: reason.trim(),
      expire_on_resolve: onResolve,
      ...(at !== undefined ? { begin: at } : {}),
      ...(seconds !== undefined ? { expire: seconds } : {}),
      ...(e?.creator ? { creator: e.creator } : {}),
    };
    setBusy(true);
    try {
      if (e) await json(silencePath(ns.trim(), e.metadata.name), { method: 'PUT', body });
      else
        await json(nsPath(ns.trim(), 'silenced'), {
          method: 'POST',
          body,
        });
      notify('ok', `${e ? 'Saved' : 'Created'} silence ${silenceName({ subscription: sub, check: chk })}`);
      p.onSaved?.();
      p.onClose();
    } catch (err) {
      setError(`The silence was not ${e ? 'saved' : 'created'}: ${messageOf(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return html`<form onSubmit=${submit} class="res-form" novalidate>
    ${
      askNamespace &&
      html`<label
        >Namespace <input value=${ns} required onInput=${onText(setNs)} autocomplete="off"
      /></label>`
    }
    <label
      >Subscription
      <input
        value=${subscription}
        disabled=${!!e}
        placeholder="every entity"
        onInput=${onText(setSubscription)}
        autocomplete="off"
        aria-describedby="silence-who"
    /></label>
    <label
      >Check
      <input
        value=${check}
        disabled=${!!e}
        placeholder="every check"
        onInput=${onText(setCheck)}
        autocomplete="off"
        aria-describedby="silence-who"
    /></label>
    <p id="silence-who" class="muted res-hint">
      Silences ${silenceWords({ subscription: subscription.trim(), check: check.trim() })}.
      ${e ? ' The subscription and check name the silence and cannot change.' : ' An entity is entity:<name>.'}
    </p>
    <label>Reason <input value=${reason} onInput=${onText(setReason)} autocomplete="off" /></label>
    <label
      >Start (empty: now)
      <input type="datetime-local" value=${begin} onInput=${onText(setBegin)} />
    </label>
    <label
      >Expire after (from the start; e.g. 3600, 30m, 2h, 1d; empty: never, or the server's default)
      <input value=${expire} onInput=${onText(setExpire)} autocomplete="off" inputmode="text" />
    </label>
    <label class="res-check">
      <input
        type="checkbox"
        checked=${onResolve}
        onChange=${(/** @type {Event} */ ev) => setOnResolve(/** @type {HTMLInputElement} */ (ev.currentTarget).checked)}
      />
      Expire when the check resolves
    </label>
    ${error && html`<p class="error-text" role="alert">${error}</p>`}
    <div class="actions">
      <button type="button" onClick=${p.onClose}>Cancel</button>
      <button type="submit" class="primary" disabled=${busy}>
        ${busy ? 'Saving…' : e ? 'Save silence' : 'Create silence'}
      </button>
    </div>
  </form>`;
}
