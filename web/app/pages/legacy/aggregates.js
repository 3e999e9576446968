// @ts-check
import { html } from '../../html.js';
import { json } from '../../api/client.js';
import { useAsync } from '../../hooks.js';
import { route } from '../../router.js';
import { Table } from '../../components/table.js';
import { confirm } from '../../components/dialog.js';
import { ErrorMessage, notify } from '../../components/notices.js';
import { UrlFilter, byName } from '../config/common.js';
import { LEGACY, legacyMessage, legacyPath } from './api.js';

/**
 * @typedef {{ ok: number, warning: number, critical: number, unknown: number, total: number, stale: number }} Results
 * @typedef {{ name: string, clients?: number, checks?: number, results?: Results, error?: string }} Aggregate
 */

/** The severities of a summary, with the class of their colour (app.css). */
const SEVERITIES = /** @type {const} */ ([
  ['ok', 'OK', 'status-passing'],
  ['warning', 'Warning', 'status-warning'],
  ['critical', 'Critical', 'status-critical'],
  ['unknown', 'Unknown', 'status-unknown'],
  ['stale', 'Stale', ''],
]);

/**
 * Every aggregate with its summary: results by severity (those older than `max_age` seconds
 * counted as stale only, when given in the URL), clients and checks; each can be deleted.
 */
export function LegacyAggregates() {
  const params = route.value.params;
  const name = params.get('name') ?? '';
  const maxAge = params.get('max_age') ?? '';
  const list = useAsync(
    async (signal) => {
      const names = /** @type {Array<{ name: string }>} */ (await json(`${LEGACY}/aggregates`, { signal }));
      return Promise.all(
        names.map(({ name: n }) =>
          json(legacyPath('aggregates', n), {
            signal,
            query: { max_age: /^\d+$/.test(maxAge) ? maxAge : undefined },
          }).then(
            (s) => /** @type {Aggregate} */ ({ name: n, .../** @type {object} */ (s) }),
            (err) => /** @type {Aggregate} */ ({ name: n, error: legacyMessage(err, `aggregate ${n}`) }),
          ),
        ),
      );
    },
    [maxAge],
  );

  /** @param {Aggregate} a */
  const remove = async (a) => {
    const ok = await confirm({
      title: `Delete aggregate ${a.name}?`,
      body: 'The results counted so far stop counting; newer results make it an aggregate again.',
      action: 'Delete aggregate',
      danger: true,
    });
    if (!ok) return;
    try {
      await json(legacyPath('aggregates', a.name), { method: 'DELETE' });
      notify('ok', `Aggregate ${a.name} deleted`);
    } catch (err) {
      notify('error', `Could not delete aggregate ${a.name}: ${legacyMessage(err, `aggregate ${a.name}`)}`);
    }
    list.reload();
  };

  const rows = byName(/** @type {Aggregate[]} */ (list.data ?? []), (a) => a.name, name);
  /** @type {import('../../components/table.js').Column<Aggregate>[]} */
  const columns = [
    { key: 'name', label: 'Name', render: (a) => a.name },
    ...SEVERITIES.map(([key, label, cls]) => ({
      key,
      label,
      class: 'cfg-num',
      render: (/** @type {Aggregate} */ a) =>
        a.error
          ? ''
          : html`<span class=${(a.results?.[key] ?? 0) > 0 ? cls : 'muted'}>${a.results?.[key] ?? 0}</span>`,
    })),
    { key: 'total', label: 'Total', class: 'cfg-num optional', render: (a) => a.results?.total ?? '' },
    { key: 'clients', label: 'Clients', class: 'cfg-num optional', render: (a) => a.clients ?? '' },
    { key: 'checks', label: 'Checks', class: 'cfg-num optional', render: (a) => a.checks ?? '' },
    {
      key: 'actions',
      label: 'Actions',
      render: (a) =>
        a.error
          ? html`<span class="error-text" title=${a.error}>${a.error}</span>`
          : html`<button
              type="button"
              class="cfg-small"
              aria-label=${`Delete aggregate ${a.name}`}
              onClick=${() => remove(a)}
            >
              Delete
            </button>`,
    },
  ];
  return html`<div>
    <div class="toolbar" role="search" aria-label="Filter aggregates">
      <${UrlFilter} param="name" label="Name contains" placeholder="e.g. web" />
      <${UrlFilter}
        param="max_age"
        type="number"
        label="Stale after (s)"
        hint="Results executed longer ago than this count as stale only"
      />
      <button type="button" onClick=${list.reload} disabled=${list.loading}>Refresh</button>
    </div>
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <p class="cfg-count" role="status">
      ${list.loading && !list.data ? 'Loading…' : `${rows.length} ${rows.length === 1 ? 'aggregate' : 'aggregates'}`}
    </p>
    <${Table}
      label="Aggregates: results by severity"
      columns=${columns}
      rows=${rows}
      rowKey=${(/** @type {Aggregate} */ a) => a.name}
      empty=${list.loading ? 'Loading…' : list.error ? 'The aggregates could not be read.' : 'No aggregates: no result names one.'}
    />
  </div>`;
}
