// @ts-check
import { html } from '../../html.js';
import { all, nsPath } from '../../api/client.js';
import { useAsync } from '../../hooks.js';
import { ALL, namespace } from '../../namespace.js';
import { href, pathOf, route } from '../../router.js';
import { Table } from '../../components/table.js';
import { ErrorMessage } from '../../components/notices.js';
import { Labels, UrlFilter, byName } from './common.js';

/**
 * A label filter as the API's label selector: `key=value` is taken as `key == value`; anything
 * else is sent as typed (`team in (a, b)`, `env != prod && tier == web`).
 * @param {string} typed
 */
function labelSelector(typed) {
  const t = typed.trim();
  const single = /^([^=!\s]+)\s*=\s*([^=\s].*)$/.exec(t);
  return single ? `${single[1]} == ${single[2]}` : t;
}

/**
 * The link to one resource's detail; under "all namespaces" it names the resource's namespace.
 * @param {import('./kinds.js').Kind} kind
 * @param {import('./kinds.js').Resource} r
 */
function detailHref(kind, r) {
  const p = new URLSearchParams(route.value.params);
  p.set('detail', r.metadata?.name ?? '');
  if (namespace.value === ALL) p.set('detail_ns', r.metadata?.namespace ?? '');
  return href(pathOf('/config', kind.plural), p);
}

/**
 * The list of one kind in the page's namespace (or every namespace): name, namespace, the kind's
 * columns, labels; filtered by name (`name`) and by a label selector (`label`), both in the URL.
 * @param {{ kind: import('./kinds.js').Kind }} p
 */
export function ConfigList({ kind }) {
  const ns = namespace.value;
  const params = route.value.params;
  const name = params.get('name') ?? '';
  const label = params.get('label') ?? '';
  const list = useAsync(
    (signal) =>
      all(nsPath(ns, kind.plural), {
        signal,
        labelSelector: label ? labelSelector(label) : undefined,
      }),
    [ns, kind.plural, label],
  );
  /** @type {import('./kinds.js').Resource[]} */
  const items = /** @type {import('./kinds.js').Resource[]} */ (list.data ?? []);
  const rows = byName(items, (r) => r.metadata?.name ?? '', name);

  /** @type {import('../../components/table.js').Column<import('./kinds.js').Resource>[]} */
  const columns = [
    {
      key: 'name',
      label: 'Name',
      render: (r) =>
        html`<a href=${detailHref(kind, r)} aria-label=${`${kind.one} ${r.metadata?.name}`}
          >${r.metadata?.name}</a
        >`,
    },
    ...(ns === ALL
      ? [
          {
            key: 'namespace',
            label: 'Namespace',
            render: (/** @type {import('./kinds.js').Resource} */ r) => r.metadata?.namespace,
          },
        ]
      : []),
    ...kind.columns,
    { key: 'labels', label: 'Labels', render: (r) => html`<${Labels} labels=${r.metadata?.labels} />` },
  ];

  const where = ns === ALL ? 'in every namespace' : `in namespace ${ns}`;
  return html`<section class="cfg-page" aria-labelledby="cfg-title">
    <p class="cfg-crumbs"><a href=${href('/config', { namespace: ns })}>Configuration</a></p>
    <h1 id="cfg-title">${kind.title}</h1>
    <p class="muted">${kind.about} Read only.</p>
    <div class="toolbar" role="search" aria-label=${`Filter ${kind.title.toLowerCase()}`}>
      <${UrlFilter} param="name" label="Name contains" placeholder="e.g. slack" />
      <${UrlFilter}
        param="label"
        label="Labels"
        placeholder="e.g. team=ops"
        hint="A label selector: key=value, key != value, key in (a, b), joined by &&"
      />
      <button type="button" onClick=${list.reload} disabled=${list.loading}>Refresh</button>
    </div>
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <p class="cfg-count" role="status">
      ${
        list.loading && !list.data
          ? 'Loading…'
          : `${rows.length} ${rows.length === 1 ? kind.one : kind.title.toLowerCase()} ${where}${
              rows.length !== items.length ? ` (of ${items.length})` : ''
            }`
      }
    </p>
    <${Table}
      label=${`${kind.title} ${where}`}
      columns=${columns}
      rows=${rows}
      rowKey=${(/** @type {import('./kinds.js').Resource} */ r) =>
        `${r.metadata?.namespace}/${r.metadata?.name}`}
      empty=${list.loading ? 'Loading…' : `No ${kind.title.toLowerCase()} ${where}${name || label ? ' match the filters' : ''}.`}
    />
  </section>`;
}
