// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../../html.js';
import { session } from '../../api/session.js';
import { Dialog, confirm } from '../dialog.js';
import { notify, runAll } from '../notices.js';
import { canRerun, checkOf, deleteEvent, entityOf, rerunEvent, resolveEvent, silenceEvent } from './api.js';

/** @typedef {import('./api.js').MonitorEvent} MonitorEvent */
/** @typedef {'resolve' | 'silence' | 'rerun' | 'delete'} Action */

/** Expiry choices of the silence dialog, in seconds (-1: until deleted). */
const EXPIRIES = [
  [900, '15 minutes'],
  [3600, '1 hour'],
  [4 * 3600, '4 hours'],
  [86400, '1 day'],
  [7 * 86400, '1 week'],
  [-1, 'never (until deleted)'],
];

/** "web-01/disk", or "3 events". @param {MonitorEvent[]} events */
const what = (events) =>
  events.length === 1
    ? `${entityOf(/** @type {MonitorEvent} */ (events[0]))}/${checkOf(/** @type {MonitorEvent} */ (events[0]))}`
    : `${events.length} events`;

const username = () => session.peek()?.username ?? 'unknown';

/**
 * The silence dialog: reason, expiry, expire on resolve; submitting it is the confirmation.
 * @param {{ events: MonitorEvent[], open: boolean, onClose: () => void, onDone: () => void }} p
 */
function SilenceDialog({ events, open, onClose, onDone }) {
  const [reason, setReason] = useState('');
  const [expire, setExpire] = useState('3600');
  const [onResolve, setOnResolve] = useState(false);
  const [busy, setBusy] = useState(false);
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const o = {
        reason: reason.trim(),
        expire: Number(expire),
        expireOnResolve: onResolve,
        creator: username(),
      };
      await runAll(
        events.length === 1 ? `silenced: ${what(events)}` : 'silenced',
        events.map((ev) => () => silenceEvent(ev, o)),
      );
    } finally {
      setBusy(false);
      onClose();
      onDone();
    }
  };
  return html`<${Dialog} title=${`Silence ${what(events)}`} open=${open} onClose=${onClose}>
    <form class="form silence-form" onSubmit=${submit}>
      <p class="muted">
        Creates the silenced entry <code>entity:&lt;entity&gt;:&lt;check&gt;</code> for each event: its
        handlers that filter on silencing stay quiet; the event is still stored and shown.
      </p>
      <label
        >Reason
        <input
          name="reason"
          value=${reason}
          placeholder="e.g. disk replacement planned"
          onInput=${(/** @type {Event} */ e) => setReason(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
      /></label>
      <label
        >Expires after
        <select
          name="expire"
          value=${expire}
          onChange=${(/** @type {Event} */ e) => setExpire(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}
        >
          ${EXPIRIES.map(([s, label]) => html`<option value=${String(s)}>${label}</option>`)}
        </select></label
      >
      <label class="check-label"
        ><input
          type="checkbox"
          name="expire_on_resolve"
          checked=${onResolve}
          onChange=${(/** @type {Event} */ e) =>
            setOnResolve(/** @type {HTMLInputElement} */ (e.currentTarget).checked)}
        />
        Expire when the event resolves</label
      >
      <div class="actions">
        <button type="button" onClick=${onClose}>Cancel</button>
        <button type="submit" class="primary" disabled=${busy}>Silence</button>
      </div>
    </form>
  <//>`;
}

/**
 * Resolve, silence, re-run and delete for the given events, each asked first and reported after
 * (`runAll`: how many succeeded, the first errors). `onDone(action)` runs once an action ended.
 * @param {{ events: MonitorEvent[], onDone: (a: Action) => void, label?: string }} p
 */
export function EventActions({ events, onDone, label }) {
  const [silencing, setSilencing] = useState(false);
  const none = events.length === 0;
  const subject = what(events);

  const resolve = async () => {
    const ok = await confirm({
      title: `Resolve ${subject}?`,
      body: 'Each event gets a passing result (status 0) now, as if its check had passed; handlers see a resolution.',
      action: 'Resolve',
    });
    if (!ok) return;
    await runAll(
      'resolved',
      events.map((e) => () => resolveEvent(e, username())),
    );
    onDone('resolve');
  };

  const rerun = async () => {
    const runnable = events.filter(canRerun);
    const skipped = events.length - runnable.length;
    if (runnable.length === 0) {
      notify('error', 'Keepalives are sent by agents on their own: there is no check to run again.');
      return;
    }
    const ok = await confirm({
      title: `Run ${runnable.length === 1 ? 'the check' : `${runnable.length} checks`} again now?`,
      body:
        `The check runs once more on the entity's agent (subscription entity:<name>); the new result shows when it arrives.` +
        (skipped ? ` ${skipped} keepalive event${skipped === 1 ? '' : 's'} left out.` : ''),
      action: 'Run now',
    });
    if (!ok) return;
    await runAll(
      runnable.length === 1 ? 're-run requested' : 're-runs requested',
      runnable.map((e) => () => rerunEvent(e, username())),
    );
    onDone('rerun');
  };

  const remove = async () => {
    const ok = await confirm({
      title: `Delete ${subject}?`,
      body: 'The stored events and their history are deleted. A check that runs again creates its event anew.',
      action: 'Delete',
      danger: true,
    });
    if (!ok) return;
    await runAll(
      'deleted',
      events.map((e) => () => deleteEvent(e)),
    );
    onDone('delete');
  };

  return html`<div class="event-actions" role="group" aria-label=${label ?? 'Actions'}>
    <button type="button" disabled=${none} onClick=${resolve}>Resolve</button>
    <button type="button" disabled=${none} onClick=${() => setSilencing(true)}>Silence…</button>
    <button type="button" disabled=${none} onClick=${rerun}>Re-run</button>
    <button type="button" class="danger-text" disabled=${none} onClick=${remove}>Delete</button>
    <${SilenceDialog}
      events=${events}
      open=${silencing}
      onClose=${() => setSilencing(false)}
      onDone=${() => onDone('silence')}
    />
  </div>`;
}
