// @ts-check
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { all, call, json, nsPath, urlOf } from '../api/client.js';
import { messageOf } from '../api/errors.js';
import { ALL, namespace } from '../namespace.js';
import { href, navigate, pathOf } from '../router.js';
import { useAsync } from '../hooks.js';
import { useEventStream } from '../components/events/live.js';
import { confirm } from '../components/dialog.js';
import { ErrorMessage, notify } from '../components/notices.js';
import { Ago, StatusBadge } from '../components/status.js';
import { Table } from '../components/table.js';
import { Chips, Facts, KeyValues, YesNo } from '../components/resources/facts.js';
import { SilenceDialog, silenceWords } from '../components/resources/silence-dialog.js';
import { When } from '../components/resources/time.js';
import { ownSubscriptions } from './entities.js';

/**
 * @typedef {import('./entities.js').Entity & {
 *   system?: Record<string, unknown>,
 *   user?: string,
 *   deregister?: boolean,
 *   deregistration?: { handler?: string },
 *   redact?: string[] | null,
 *   keepalive_handlers?: string[] | null,
 * }} FullEntity
 * @typedef {{
 *   timestamp?: number,
 *   entity?: { metadata: { name: string, namespace: string } },
 *   check: { metadata: { name: string }, status?: number, output?: string, executed?: number, is_silenced?: boolean, silenced?: string[] | null },
 * }} Event
 * @typedef {import('../components/resources/silence-dialog.js').Silence} Silence
 */

/** @param {Event[]} list */
const byCheck = (list) =>
  [...list].sort((a, b) => a.check.metadata.name.localeCompare(b.check.metadata.name));

/**
 * The entity's events: listed, then followed live on the event stream (`entity=`), listed again at
 * every (re)connection to catch up; the stream's state is shown in the header.
 * @param {string} ns
 * @param {string} name
 */
function useEntityEvents(ns, name) {
  const [events, setEvents] = useState(/** @type {Event[] | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {unknown} */ (undefined));
  const ctl = useRef(/** @type {AbortController | undefined} */ (undefined));
  const load = () => {
    ctl.current?.abort();
    const c = new AbortController();
    ctl.current = c;
    /** @type {Promise<Event[]>} */
    const listed = all(`${nsPath(ns, 'events')}/${encodeURIComponent(name)}`, { signal: c.signal });
    listed
      .then((list) => {
        if (c.signal.aborted) return;
        setEvents(byCheck(list));
        setError(undefined);
      })
      .catch((err) => !c.signal.aborted && setError(err));
  };
  useEffect(() => {
    if (ns === ALL) return undefined;
    load();
    return () => ctl.current?.abort();
  }, [ns, name]);
  useEventStream(ns === ALL ? undefined : urlOf(`${nsPath(ns, 'events')}/stream`, { entity: name }), {
    onOpen: load,
    onPut: (put) => {
      const ev = /** @type {Event} */ (/** @type {unknown} */ (put));
      if (!ev?.check?.metadata?.name) return;
      setEvents((list) =>
        byCheck([...(list ?? []).filter((e) => e.check.metadata.name !== ev.check.metadata.name), ev]),
      );
    },
    onDelete: (d) => {
      if (typeof d?.check !== 'string') return;
      setEvents((list) => (list ?? []).filter((e) => e.check.metadata.name !== d.check));
    },
  });
  return { events, error };
}

/**
 * @param {{ ns: string, entity: string, events: Event[] | undefined, error: unknown }} p
 */
function EntityEvents({ ns, entity, events, error }) {
  if (error) return html`<${ErrorMessage} error=${error} />`;
  if (!events) return html`<p class="muted">Loading events…</p>`;
  /** @type {import('../components/table.js').Column<Event>[]} */
  const columns = [
    {
      key: 'check',
      label: 'Check',
      render: (e) =>
        html`<a href=${href(pathOf('/events', entity, e.check.metadata.name), { namespace: ns })}
          >${e.check.metadata.name}</a
        >`,
    },
    { key: 'status', label: 'Status', render: (e) => html`<${StatusBadge} status=${e.check.status} />` },
    {
      key: 'output',
      label: 'Output',
      class: 'optional',
      render: (e) => html`<span title=${e.check.output ?? ''}>${(e.check.output ?? '').trim()}</span>`,
    },
    {
      key: 'executed',
      label: 'Last run',
      render: (e) => html`<${Ago} at=${e.check.executed ?? e.timestamp} />`,
    },
    { key: 'silenced', label: 'Silenced', render: (e) => html`<${YesNo} value=${e.check.is_silenced} />` },
  ];
  return html`<${Table}
    label=${`Events of ${entity}`}
    columns=${columns}
    rows=${events}
    rowKey=${(/** @type {Event} */ e) => e.check.metadata.name}
    empty="No events."
  />`;
}

/** @param {{ silences: Silence[] | undefined, entity: string, ns: string }} p */
function EntitySilences({ silences, entity, ns }) {
  if (!silences || silences.length === 0) return html`<p class="muted">Not silenced.</p>`;
  return html`<ul class="res-silences">
    ${silences.map(
      (s) =>
        html`<li>
          <a href=${href('/silences', { namespace: ns, sub: `entity:${entity}` })}>${s.metadata.name}</a>
          <span>${`: ${silenceWords(s)}${s.reason ? ` (${s.reason})` : ''}; expires `}</span>
          <${When} at=${s.expire_at} none="never" />${s.expire_on_resolve ? ' or when resolved' : ''}
        </li>`,
    )}
  </ul>`;
}

/** /entities/:name: an entity, its events (live), facts, labels; silence it, delete it. @param {{ params: Record<string, string> }} p */
export function EntityDetail({ params }) {
  const name = params.name ?? '';
  const ns = namespace.value;
  const [silencing, setSilencing] = useState(false);
  const entity = useAsync(
    (signal) =>
      ns === ALL
        ? Promise.resolve(undefined)
        : /** @type {Promise<FullEntity>} */ (
            json(`${nsPath(ns, 'entities')}/${encodeURIComponent(name)}`, { signal })
          ),
    [ns, name],
  );
  const silences = useAsync(
    (signal) =>
      ns === ALL
        ? Promise.resolve([])
        : /** @type {Promise<Silence[]>} */ (
            all(`${nsPath(ns, 'silenced')}/subscriptions/${encodeURIComponent(`entity:${name}`)}`, { signal })
          ),
    [ns, name],
  );
  const { events, error } = useEntityEvents(ns, name);

  if (ns === ALL)
    return html`<section class="res-page">
      <h1>${name}</h1>
      <p>Entities live in a namespace: choose one above to see this entity.</p>
    </section>`;

  const remove = async () => {
    const ok = await confirm({
      title: `Delete entity ${name}`,
      body: `Delete entity ${name} of namespace ${ns} and its events? An agent still connected registers it again.`,
      action: 'Delete entity',
      danger: true,
    });
    if (!ok) return;
    try {
      await call(`${nsPath(ns, 'entities')}/${encodeURIComponent(name)}`, { method: 'DELETE' });
      notify('ok', `Entity ${name} deleted`);
      navigate('/entities', { namespace: ns });
    } catch (err) {
      notify('error', `Entity ${name} was not deleted: ${messageOf(err)}`);
    }
  };

  const e = entity.data;
  return html`<section class="res-page res-detail">
    <p class="res-crumbs"><a href=${href('/entities', { namespace: ns })}>Entities</a> / ${ns}</p>
    <div class="res-head">
      <h1>${name}</h1>
      ${e?.entity_class && html`<span class="badge res-class">${e.entity_class}</span>`}
      <div class="res-actions">
        <button type="button" onClick=${() => setSilencing(true)}>Silence</button>
        <button type="button" class="danger" onClick=${remove}>Delete</button>
      </div>
    </div>
    ${entity.error ? html`<${ErrorMessage} error=${entity.error} retry=${entity.reload} />` : null}
    <h2>Silences</h2>
    <${EntitySilences} silences=${silences.data} entity=${name} ns=${ns} />
    <h2>Events</h2>
    <${EntityEvents} ns=${ns} entity=${name} events=${events} error=${error} />
    ${
      e &&
      html`<div class="cards res-cards">
        <section class="card" aria-labelledby="entity-overview">
          <h2 id="entity-overview">Overview</h2>
          <dl class="facts">
            <dt>Class</dt>
            <dd>${e.entity_class}</dd>
            <dt>Last seen</dt>
            <dd><${Ago} at=${e.last_seen} /></dd>
            <dt>Agent version</dt>
            <dd>
              ${e.monitor_agent_version || e.sensu_agent_version || html`<span class="muted">none</span>`}
            </dd>
            <dt>User</dt>
            <dd>${e.user || html`<span class="muted">none</span>`}</dd>
            <dt>Deregister</dt>
            <dd><${YesNo} value=${e.deregister} /></dd>
            <dt>Deregistration handler</dt>
            <dd>${e.deregistration?.handler || html`<span class="muted">none</span>`}</dd>
            <dt>Keepalive handlers</dt>
            <dd><${Chips} items=${e.keepalive_handlers} label="Keepalive handlers" /></dd>
            <dt>Redacted fields</dt>
            <dd><${Chips} items=${e.redact} label="Redacted fields" /></dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="entity-subscriptions">
          <h2 id="entity-subscriptions">Subscriptions</h2>
          <${Chips} items=${ownSubscriptions(e)} label="Subscriptions" />
          <p class="muted res-hint">And entity:${name}, which every entity has.</p>
          <h2>Labels</h2>
          <${KeyValues} map=${e.metadata.labels} label="Labels" />
          <h2>Annotations</h2>
          <${KeyValues} map=${e.metadata.annotations} label="Annotations" />
        </section>
        <section class="card res-system" aria-labelledby="entity-system">
          <h2 id="entity-system">System</h2>
          <${Facts} value=${e.system} />
        </section>
      </div>`
    }
    <${SilenceDialog}
      open=${silencing}
      onClose=${() => setSilencing(false)}
      onSaved=${silences.reload}
      namespace=${ns}
      preset=${{ subscription: `entity:${name}` }}
      title=${`Silence entity ${name}`}
    />
  </section>`;
}
