// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, nsPath, page } from '../api/client.js';
import { ALL, namespace } from '../namespace.js';
import { href, pathOf, setParams } from '../router.js';
import { Table } from '../components/table.js';
import { ErrorMessage, runAll } from '../components/notices.js';
import { confirm } from '../components/dialog.js';
import { Ago, StatusBadge } from '../components/status.js';
import { usePaged, PageBar, pageSizeOf } from '../components/resources/paged.js';
import { FilterSelect, FilterText, clauseOf, joinClauses, param } from '../components/resources/filters.js';
import { keyOf, useKeepalives } from '../components/resources/keepalives.js';

/**
 * A core/v2 entity, the fields the pages show.
 * @typedef {{
 *   metadata: { name: string, namespace: string, labels?: Record<string, string> | null, annotations?: Record<string, string> | null },
 *   entity_class?: string,
 *   subscriptions?: string[] | null,
 *   last_seen?: number,
 *   monitor_agent_version?: string,
 *   sensu_agent_version?: string,
 * }} Entity
 * @typedef {import('../components/resources/keepalives.js').KeepaliveEvent} KeepaliveEvent
 */

const CLASSES = /** @type {Array<[string, string]>} */ ([
  ['', 'any'],
  ['agent', 'agent'],
  ['proxy', 'proxy'],
  ['backend', 'backend'],
]);

/** The subscriptions a person chose: the automatic `entity:<name>` left out. @param {Entity} e */
export const ownSubscriptions = (e) =>
  (e.subscriptions ?? []).filter((s) => s !== `entity:${e.metadata.name}`);

/** Worst first: critical, unknown, warning, passing, then entities without a keepalive. @param {KeepaliveEvent | null | false | undefined} k */
function keepaliveRank(k) {
  const s = k ? k.check?.status : undefined;
  if (s === undefined) return 0;
  if (s === 2) return 4;
  if (s >= 3) return 3;
  return s === 1 ? 2 : 1;
}

/**
 * @param {{ event: KeepaliveEvent | null | false | undefined }} p
 */
function KeepaliveState({ event }) {
  if (event === undefined) return html`<span class="muted" title="being read">…</span>`;
  if (event === false)
    return html`<span class="muted" title="the keepalive events could not be read">unread</span>`;
  if (event === null || event.check?.status === undefined) return html`<span class="muted">none</span>`;
  return html`<${StatusBadge} status=${event.check.status} />`;
}

/** Entity detail link, in the entity's own namespace. @param {Entity} e */
const entityHref = (e) => href(pathOf('/entities', e.metadata.name), { namespace: e.metadata.namespace });

/** /entities: every entity of the namespace, paged from the server, filtered by the API's selectors. @param {{ params: Record<string, string> }} _p */
export function Entities(_p) {
  const ns = namespace.value;
  const name = param('name');
  const cls = param('class');
  const sub = param('sub');
  const labels = param('labels');
  const sort = param('sort');
  const [selected, setSelected] = useState(/** @type {Set<string>} */ (new Set()));

  /** @type {import('../components/resources/paged.js').Paged<Entity>} */
  const list = usePaged(
    (o) =>
      page(nsPath(ns, 'entities'), {
        ...o,
        labelSelector: labels || undefined,
        fieldSelector: joinClauses([
          clauseOf(name, (v) => `entity.name matches ${v}`),
          clauseOf(cls, (v) => `entity.entity_class == ${v}`),
          clauseOf(sub, (v) => `${v} in entity.subscriptions`),
        ]),
      }),
    [ns, name, cls, sub, labels],
    pageSizeOf(param('limit')),
  );
  const keepalives = useKeepalives(list.items, list.version);

  let rows = list.items;
  if (sort === 'last_seen') rows = [...rows].sort((a, b) => (b.last_seen ?? 0) - (a.last_seen ?? 0));
  else if (sort === 'keepalive')
    rows = [...rows].sort(
      (a, b) => keepaliveRank(keepalives.get(keyOf(b))) - keepaliveRank(keepalives.get(keyOf(a))),
    );

  /** @type {import('../components/table.js').Column<Entity>[]} */
  const columns = [
    {
      key: 'name',
      label: 'Name',
      render: (e) => html`<a href=${entityHref(e)}>${e.metadata.name}</a>`,
    },
    ...(ns === ALL
      ? [{ key: 'ns', label: 'Namespace', render: (/** @type {Entity} */ e) => e.metadata.namespace }]
      : []),
    { key: 'class', label: 'Class', render: (e) => e.entity_class ?? '' },
    {
      key: 'subs',
      label: 'Subscriptions',
      class: 'optional',
      render: (e) => {
        const s = ownSubscriptions(e);
        return s.length
          ? html`<span title=${s.join(', ')}>${s.join(', ')}</span>`
          : html`<span class="muted">none</span>`;
      },
    },
    {
      key: 'seen',
      label: 'Last seen',
      sort: 'last_seen',
      render: (e) => html`<${Ago} at=${e.last_seen} />`,
    },
    {
      key: 'keepalive',
      label: 'Keepalive',
      sort: 'keepalive',
      render: (e) => html`<${KeepaliveState} event=${keepalives.get(keyOf(e))} />`,
    },
    {
      key: 'version',
      label: 'Agent',
      class: 'optional',
      render: (e) => e.monitor_agent_version || e.sensu_agent_version || '',
    },
  ];

  const picked = list.items.filter((e) => selected.has(keyOf(e)));
  const deletePicked = async () => {
    const ok = await confirm({
      title: `Delete ${picked.length} entities`,
      body: `Delete ${picked.map((e) => e.metadata.name).join(', ')}? Their events go with them. An agent still connected registers its entity again.`,
      action: 'Delete',
      danger: true,
    });
    if (!ok) return;
    await runAll(
      'entities deleted',
      picked.map(
        (e) => () =>
          call(`${nsPath(e.metadata.namespace, 'entities')}/${encodeURIComponent(e.metadata.name)}`, {
            method: 'DELETE',
          }),
      ),
    );
    setSelected(new Set());
    list.reload();
  };

  return html`<section class="res-page">
    <h1>Entities</h1>
    <form
      class="toolbar"
      role="search"
      aria-label="Filter entities"
      onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}
    >
      <${FilterText} name="name" label="Name contains" grow />
      <${FilterSelect} name="class" label="Class" options=${CLASSES} />
      <${FilterText} name="sub" label="Subscription" />
      <${FilterText}
        name="labels"
        label="Label selector"
        placeholder="region == eu"
        hint="e.g. region == eu && tier in (web, db)"
      />
      <button type="button" onClick=${list.reload}>Refresh</button>
    </form>
    ${
      picked.length > 0 &&
      html`<div class="toolbar res-bulk" role="group" aria-label="Selected entities">
        <span>${picked.length} selected</span>
        <button type="button" class="danger" onClick=${deletePicked}>Delete selected</button>
        <button type="button" onClick=${() => setSelected(new Set())}>Clear selection</button>
      </div>`
    }
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <${Table}
      label="Entities"
      columns=${columns}
      rows=${rows}
      rowKey=${keyOf}
      rowLabel=${(/** @type {Entity} */ e) => e.metadata.name}
      selected=${selected}
      onSelect=${setSelected}
      sort=${sort}
      onSort=${(/** @type {string} */ k) => setParams({ sort: k === sort ? undefined : k })}
      empty=${list.loading ? 'Loading…' : 'No entity matches.'}
    />
    <${PageBar} list=${list} what="entities" />
    ${sort && list.more && html`<p class="muted res-hint">Sorted among the entities loaded; load all to sort every one.</p>`}
  </section>`;
}
