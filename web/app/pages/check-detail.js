// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { all, json, nsPath, page } from '../api/client.js';
import { ALL, namespace } from '../namespace.js';
import { href, pathOf } from '../router.js';
import { useAsync } from '../hooks.js';
import { ErrorMessage } from '../components/notices.js';
import { Ago, StatusBadge } from '../components/status.js';
import { Table } from '../components/table.js';
import { Chips, KeyValues, YesNo } from '../components/resources/facts.js';
import { RunCheckDialog, checkPath } from '../components/resources/run-dialog.js';
import { SilenceDialog, silenceWords } from '../components/resources/silence-dialog.js';
import { When, formatDuration } from '../components/resources/time.js';
import { schedule } from './checks.js';

/**
 * @typedef {import('../components/resources/run-dialog.js').Check} Check
 * @typedef {import('../components/resources/silence-dialog.js').Silence} Silence
 * @typedef {{ entity: { metadata: { name: string } }, check: { status?: number, executed?: number, output?: string } }} Event
 */

/** Events of the check shown at most: its latest results per entity. */
const EVENTS_SHOWN = 200;

/** /checks/:name: a check's definition, its silences and its events; run it now, silence it. @param {{ params: Record<string, string> }} p */
export function CheckDetail({ params }) {
  const name = params.name ?? '';
  const ns = namespace.value;
  const [running, setRunning] = useState(false);
  const [silencing, setSilencing] = useState(false);
  const check = useAsync(
    (signal) =>
      ns === ALL
        ? Promise.resolve(undefined)
        : /** @type {Promise<Check>} */ (json(checkPath(ns, name), { signal })),
    [ns, name],
  );
  const silences = useAsync(
    (signal) =>
      ns === ALL
        ? Promise.resolve([])
        : /** @type {Promise<Silence[]>} */ (
            all(`${nsPath(ns, 'silenced')}/checks/${encodeURIComponent(name)}`, {
              signal,
            })
          ),
    [ns, name],
  );
  const events = useAsync(
    (signal) =>
      ns === ALL
        ? Promise.resolve({ items: [], continue: undefined })
        : /** @type {Promise<{ items: Event[], continue: string | undefined }>} */ (
            page(nsPath(ns, 'events'), {
              fieldSelector: `check.name == ${name}`,
              limit: EVENTS_SHOWN,
              signal,
            })
          ),
    [ns, name],
  );

  if (ns === ALL)
    return html`<section class="res-page">
      <h1>${name}</h1>
      <p>Checks live in a namespace: choose one above to see this check.</p>
    </section>`;

  const c = check.data;
  /** @type {import('../components/table.js').Column<Event>[]} */
  const columns = [
    {
      key: 'entity',
      label: 'Entity',
      render: (e) =>
        html`<a href=${href(pathOf('/events', e.entity.metadata.name, name), { namespace: ns })}
          >${e.entity.metadata.name}</a
        >`,
    },
    { key: 'status', label: 'Status', render: (e) => html`<${StatusBadge} status=${e.check.status} />` },
    { key: 'output', label: 'Output', class: 'optional', render: (e) => (e.check.output ?? '').trim() },
    { key: 'executed', label: 'Last run', render: (e) => html`<${Ago} at=${e.check.executed} />` },
  ];

  return html`<section class="res-page res-detail">
    <p class="res-crumbs"><a href=${href('/checks', { namespace: ns })}>Checks</a> / ${ns}</p>
    <div class="res-head">
      <h1>${name}</h1>
      <div class="res-actions">
        <button type="button" disabled=${!c} onClick=${() => setRunning(true)}>Run now</button>
        <button type="button" onClick=${() => setSilencing(true)}>Silence</button>
      </div>
    </div>
    ${check.error ? html`<${ErrorMessage} error=${check.error} retry=${check.reload} />` : null}
    ${
      c &&
      html`<div class="cards res-cards">
        <section class="card" aria-labelledby="check-definition">
          <h2 id="check-definition">Definition</h2>
          <dl class="facts">
            <dt>Command</dt>
            <dd><code>${c.command}</code></dd>
            <dt>Schedule</dt>
            <dd>${schedule(c) || html`<span class="muted">none</span>`}</dd>
            <dt>Subscriptions</dt>
            <dd><${Chips} items=${c.subscriptions} label="Subscriptions" /></dd>
            <dt>Published</dt>
            <dd><${YesNo} value=${c.publish} /></dd>
            <dt>Round robin</dt>
            <dd><${YesNo} value=${c.round_robin} /></dd>
            <dt>TTL</dt>
            <dd>${c.ttl && c.ttl > 0 ? formatDuration(c.ttl) : html`<span class="muted">none</span>`}</dd>
            <dt>Timeout</dt>
            <dd>${c.timeout ? formatDuration(c.timeout) : html`<span class="muted">none</span>`}</dd>
            <dt>Handlers</dt>
            <dd><${Chips} items=${c.handlers} label="Handlers" /></dd>
            <dt>Proxy entity</dt>
            <dd>${c.proxy_entity_name || html`<span class="muted">none</span>`}</dd>
            <dt>Labels</dt>
            <dd><${KeyValues} map=${c.metadata.labels} label="Labels" /></dd>
            <dt>Created by</dt>
            <dd>${c.metadata.created_by || html`<span class="muted">unknown</span>`}</dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="check-silences">
          <h2 id="check-silences">Silences</h2>
          ${
            silences.data && silences.data.length
              ? html`<ul class="res-silences">
                  ${silences.data.map(
                    (s) =>
                      html`<li>
                        <a href=${href('/silences', { namespace: ns, check: name })}>${s.metadata.name}</a>
                        <span>${`: ${silenceWords(s)}${s.reason ? ` (${s.reason})` : ''}; expires `}</span>
                        <${When} at=${s.expire_at} none="never" />
                      </li>`,
                  )}
                </ul>`
              : html`<p class="muted">Not silenced.</p>`
          }
        </section>
      </div>`
    }
    <h2>Events</h2>
    ${events.error ? html`<${ErrorMessage} error=${events.error} retry=${events.reload} />` : null}
    <${Table}
      label=${`Events of check ${name}`}
      columns=${columns}
      rows=${events.data?.items ?? []}
      rowKey=${(/** @type {Event} */ e) => e.entity.metadata.name}
      empty=${events.loading ? 'Loading…' : 'No events of this check.'}
    />
    ${events.data?.continue && html`<p class="muted res-hint">The first ${EVENTS_SHOWN} entities are shown.</p>`}
    ${
      c &&
      html`<details class="res-json">
        <summary>Definition as JSON</summary>
        <pre>${JSON.stringify(c, null, 2)}</pre>
      </details>`
    }
    <${RunCheckDialog}
      check=${running ? (c ?? null) : null}
      onClose=${() => {
        setRunning(false);
        events.reload();
      }}
    />
    <${SilenceDialog}
      open=${silencing}
      onClose=${() => setSilencing(false)}
      onSaved=${silences.reload}
      namespace=${ns}
      preset=${{ check: name }}
      title=${`Silence check ${name}`}
    />
  </section>`;
}
