// @ts-check
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { href, navigate, pathOf } from '../router.js';
import { ALL, namespace } from '../namespace.js';
import { ErrorMessage, notify } from '../components/notices.js';
import { Ago, StatusBadge, ago, statusName } from '../components/status.js';
import { EventActions } from '../components/events/actions.js';
import { useEventStream } from '../components/events/live.js';
import { EventFlags, lastChangeOf, useClock } from '../components/events/format.js';
import { getEvent, silencedByOf, streamUrl } from '../components/events/api.js';
import { toYaml } from '../components/events/yaml.js';

/** @typedef {import('../components/events/api.js').MonitorEvent} MonitorEvent */

// One event (docs/architecture.md#events-pages): output, the history as a timeline, occurrences,
// state and flapping, the entries silencing it, hooks' output, metrics points, the entity's labels;
// copy as JSON or YAML; the same actions as the list. It follows the stream narrowed to this event.

/**
 * Copies text: the Clipboard API where the page may use it, else a selected textarea.
 * @param {string} text
 */
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('the browser refused to copy');
  } finally {
    area.remove();
  }
}

/** @param {number | undefined} t Unix seconds */
const when = (t) => (t ? new Date(t * 1000).toLocaleString() : 'never');

/**
 * The 21 last results, oldest first, each a coloured mark with its status and time in words.
 * @param {{ history: Array<{ status: number, executed: number }> }} p
 */
function Timeline({ history }) {
  if (history.length === 0) return html`<p class="muted">No history yet.</p>`;
  return html`<ol class="timeline event-timeline" aria-label="History, oldest first">
    ${history.map(
      (h) =>
        html`<li
          class=${`status-${statusName(h.status)}`}
          title=${`${statusName(h.status)} (${h.status}) at ${when(h.executed)}, ${ago(h.executed)}`}
        >
          <span class="visually-hidden">${statusName(h.status)} (${h.status}) at ${when(h.executed)}</span>
        </li>`,
    )}
  </ol>`;
}

/**
 * Labels as a definition list.
 * @param {{ labels: Record<string, string> | null | undefined, what: string }} p
 */
function Labels({ labels, what }) {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return html`<p class="muted">No labels on the ${what}.</p>`;
  return html`<dl class="facts labels">
    ${entries.map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${v}</dd>`,
    )}
  </dl>`;
}

/**
 * @typedef {{ metadata?: { name?: string }, command?: string, status?: number, output?: string,
 *   executed?: number, duration?: number, [k: string]: unknown }} HookResult
 */

/** @param {{ event: MonitorEvent }} p */
function Hooks({ event }) {
  const hooks = /** @type {HookResult[]} */ (event.check.hooks ?? []);
  if (hooks.length === 0) return html`<p class="muted">No hook ran for this result.</p>`;
  return html`${hooks.map(
    (h) =>
      html`<div class="hook">
        <h3>${h.metadata?.name ?? 'hook'} <${StatusBadge} status=${h.status} /></h3>
        ${h.command && html`<p class="muted"><code>${h.command}</code></p>`}
        <pre aria-label=${`Output of hook ${h.metadata?.name ?? ''}`}>${h.output || '(no output)'}</pre>
      </div>`,
  )}`;
}

/**
 * @typedef {{ name?: string, value?: number, timestamp?: number, tags?: Array<{ name: string, value: string }> | null }} Point
 */

/** @param {{ event: MonitorEvent }} p */
function Metrics({ event }) {
  const points = /** @type {Point[]} */ (event.metrics?.points ?? []);
  if (points.length === 0)
    return html`<p class="muted">
      No metrics points. (Metrics go to their handlers and are not stored with the event.)
    </p>`;
  return html`<div class="table-scroll">
    <table class="plain">
      <caption class="visually-hidden">
        Metrics points
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
          <th scope="col">Time</th>
          <th scope="col">Tags</th>
        </tr>
      </thead>
      <tbody>
        ${points.map(
          (m) =>
            html`<tr>
              <td>${m.name}</td>
              <td>${m.value}</td>
              <td>
                ${m.timestamp ? when(m.timestamp > 1e11 ? Math.floor(m.timestamp / 1e9) : m.timestamp) : ''}
              </td>
              <td>${(m.tags ?? []).map((t) => `${t.name}=${t.value}`).join(', ')}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** @param {{ event: MonitorEvent }} p */
function RawEvent({ event }) {
  const [format, setFormat] = useState(/** @type {'json' | 'yaml'} */ ('yaml'));
  /** @param {'json' | 'yaml'} f */
  const textOf = (f) => (f === 'json' ? `${JSON.stringify(event, null, 2)}\n` : toYaml(event));
  /** @param {'json' | 'yaml'} f */
  const copy = async (f) => {
    try {
      await copyText(textOf(f));
      notify('ok', `Copied the event as ${f.toUpperCase()}`);
    } catch (err) {
      notify('error', `Could not copy: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  return html`<div class="raw-event">
    <div class="toolbar">
      <button type="button" onClick=${() => void copy('json')}>Copy as JSON</button>
      <button type="button" onClick=${() => void copy('yaml')}>Copy as YAML</button>
    </div>
    <details>
      <summary>Show the event as text</summary>
      <div class="tabs" role="group" aria-label="Format">
        <label class="check-label"
          ><input
            type="radio"
            name="raw-format"
            checked=${format === 'yaml'}
            onChange=${() => setFormat('yaml')}
          />
          YAML</label
        >
        <label class="check-label"
          ><input
            type="radio"
            name="raw-format"
            checked=${format === 'json'}
            onChange=${() => setFormat('json')}
          />
          JSON</label
        >
      </div>
      <pre class="raw" aria-label=${`The event as ${format.toUpperCase()}`}>${textOf(format)}</pre>
    </details>
  </div>`;
}

/** /events/:entity/:check @param {{ params: Record<string, string> }} p */
export function EventDetail({ params }) {
  const { entity, check } = /** @type {{ entity: string, check: string }} */ (params);
  const chosen = namespace.value;
  // An event lives in one namespace: "all namespaces" has no event of this name; say so below.
  const ns = chosen === ALL ? '' : chosen;
  const [event, setEvent] = useState(/** @type {MonitorEvent | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {unknown} */ (undefined));
  const [deleted, setDeleted] = useState(false);
  const issued = useRef(0);
  useClock();

  const load = useCallback(async () => {
    if (!ns) return;
    const mine = ++issued.current;
    try {
      const e = await getEvent(ns, entity, check);
      if (mine !== issued.current) return;
      setEvent(e);
      setError(undefined);
      setDeleted(false);
    } catch (err) {
      if (mine === issued.current) setError(err);
    }
  }, [ns, entity, check]);

  useEffect(() => {
    setEvent(undefined);
    setError(undefined);
    setDeleted(false);
    void load();
  }, [load]);

  useEventStream(ns ? streamUrl(ns, { entity, check }) : undefined, {
    // First connection: the read above may have been before it; after a reconnection, certainly.
    onOpen: () => void load(),
    onPut: (e) => {
      issued.current++;
      setEvent(e);
      setDeleted(false);
      setError(undefined);
    },
    onDelete: () => setDeleted(true),
  });

  const back = href('/events', { namespace: chosen });
  const title = `${entity} / ${check}`;
  const head = html`<p class="crumbs"><a href=${back}>← Events</a></p>`;

  if (!ns)
    return html`<section>
      ${head}
      <h1>${title}</h1>
      <p class="error-box" role="alert">
        An event belongs to one namespace: choose it in the namespace switcher, or open the event from the
        list.
      </p>
    </section>`;
  if (!event)
    return html`<section>
      ${head}
      <h1>${title}</h1>
      ${error !== undefined ? html`<${ErrorMessage} error=${error} retry=${() => void load()} />` : html`<p class="muted" role="status">Loading the event…</p>`}
    </section>`;

  const c = event.check;
  const history = c.history ?? [];
  const by = silencedByOf(event);
  const entityLink = href(pathOf('/entities', entity), { namespace: ns });

  return html`<section class="event-detail">
    ${head}
    <h1>${title} <${StatusBadge} status=${c.status} /><${EventFlags} event=${event} /></h1>
    ${
      deleted &&
      html`<p class="error-box" role="alert">
        This event was deleted. What is shown is its last state; a new result of the check creates it anew.
      </p>`
    }
    ${error !== undefined && html`<${ErrorMessage} error=${error} retry=${() => void load()} />`}
    <${EventActions}
      events=${deleted ? [] : [event]}
      label="Actions on this event"
      onDone=${(/** @type {string} */ a) => {
        if (a === 'delete') navigate('/events', { namespace: chosen });
        else void load();
      }}
    />
    <div class="cards">
      <section class="card" aria-labelledby="ev-output">
        <h2 id="ev-output">Output</h2>
        <pre class="output" aria-label="Check output">${c.output || '(no output)'}</pre>
      </section>
      <section class="card" aria-labelledby="ev-state">
        <h2 id="ev-state">State</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd>${statusName(c.status)} (${c.status ?? 0})</dd>
          <dt>State</dt>
          <dd>${c.state ?? '–'}${c.state === 'flapping' ? ' (flapping)' : ''}</dd>
          <dt>Occurrences</dt>
          <dd>${c.occurrences ?? 0}</dd>
          <dt>Occurrences watermark</dt>
          <dd>${c.occurrences_watermark ?? 0}</dd>
          <dt>State change</dt>
          <dd>
            ${c.total_state_change ?? 0}
            %${
              c.low_flap_threshold || c.high_flap_threshold
                ? ` (flapping from ${c.high_flap_threshold ?? '–'} % until ${c.low_flap_threshold ?? '–'} %)`
                : ''
            }
          </dd>
          <dt>Last change</dt>
          <dd><${Ago} at=${lastChangeOf(event)} /></dd>
          <dt>Executed</dt>
          <dd><${Ago} at=${c.executed} /></dd>
          <dt>Last OK</dt>
          <dd><${Ago} at=${c.last_ok} /></dd>
          <dt>Silenced by</dt>
          <dd>
            ${by.length ? by.map((n, i) => html`${i ? ', ' : ''}<code>${n}</code>`) : html`<span class="muted">not silenced</span>`}
          </dd>
          ${
            c.command !== undefined &&
            html`<dt>Command</dt>
              <dd><code>${String(c.command)}</code></dd>`
          }
          ${
            c.interval !== undefined &&
            html`<dt>Interval</dt>
              <dd>${String(c.interval)} s</dd>`
          }
          ${
            c.processed_by !== undefined &&
            html`<dt>Processed by</dt>
              <dd>${String(c.processed_by)}</dd>`
          }
        </dl>
      </section>
    </div>
    <section aria-labelledby="ev-history">
      <h2 id="ev-history">History (${history.length} of 21)</h2>
      <${Timeline} history=${history} />
      <p class="muted timeline-legend">Oldest on the left; the newest, the current result, on the right.</p>
    </section>
    <div class="cards">
      <section class="card" aria-labelledby="ev-hooks">
        <h2 id="ev-hooks">Hooks</h2>
        <${Hooks} event=${event} />
      </section>
      <section class="card" aria-labelledby="ev-metrics">
        <h2 id="ev-metrics">Metrics</h2>
        <${Metrics} event=${event} />
      </section>
      <section class="card" aria-labelledby="ev-entity">
        <h2 id="ev-entity">Entity</h2>
        <p>
          <a href=${entityLink}>${entity}</a>
          <span class="muted"> (${event.entity?.entity_class ?? 'entity'}, namespace ${ns})</span>
        </p>
        <h3>Entity labels</h3>
        <${Labels} labels=${event.entity?.metadata?.labels} what="entity" />
        <h3>Check labels</h3>
        <${Labels} labels=${c.metadata?.labels} what="check" />
      </section>
    </div>
    <section aria-labelledby="ev-raw">
      <h2 id="ev-raw">The whole event</h2>
      <${RawEvent} event=${event} />
    </section>
  </section>`;
}
