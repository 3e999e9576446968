// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { nsPath, page } from '../api/client.js';
import { ALL, namespace } from '../namespace.js';
import { href, pathOf } from '../router.js';
import { Table } from '../components/table.js';
import { ErrorMessage } from '../components/notices.js';
import { YesNo } from '../components/resources/facts.js';
import { usePaged, PageBar, pageSizeOf } from '../components/resources/paged.js';
import { FilterText, clauseOf, joinClauses, param } from '../components/resources/filters.js';
import { RunCheckDialog } from '../components/resources/run-dialog.js';
import { SilenceDialog } from '../components/resources/silence-dialog.js';
import { formatDuration } from '../components/resources/time.js';

/** @typedef {import('../components/resources/run-dialog.js').Check} Check */

/** "every 1m" or the cron line. @param {Check} c */
export const schedule = (c) =>
  c.cron ? `cron ${c.cron}` : c.interval ? `every ${formatDuration(c.interval)}` : '';

/** @param {Check} c */
const checkHref = (c) => href(pathOf('/checks', c.metadata.name), { namespace: c.metadata.namespace });

/** @param {Check} c */
const checkKey = (c) => `${c.metadata.namespace}/${c.metadata.name}`;

/** /checks: the check configurations; run one now, silence one. @param {{ params: Record<string, string> }} _p */
export function Checks(_p) {
  const ns = namespace.value;
  const name = param('name');
  const sub = param('sub');
  const labels = param('labels');
  const [running, setRunning] = useState(/** @type {Check | null} */ (null));
  const [silencing, setSilencing] = useState(/** @type {Check | null} */ (null));

  /** @type {import('../components/resources/paged.js').Paged<Check>} */
  const list = usePaged(
    (o) =>
      page(nsPath(ns, 'checks'), {
        ...o,
        labelSelector: labels || undefined,
        fieldSelector: joinClauses([
          clauseOf(name, (v) => `check.name matches ${v}`),
          clauseOf(sub, (v) => `${v} in check.subscriptions`),
        ]),
      }),
    [ns, name, sub, labels],
    pageSizeOf(param('limit')),
  );

  /** @type {import('../components/table.js').Column<Check>[]} */
  const columns = [
    { key: 'name', label: 'Name', render: (c) => html`<a href=${checkHref(c)}>${c.metadata.name}</a>` },
    ...(ns === ALL
      ? [{ key: 'ns', label: 'Namespace', render: (/** @type {Check} */ c) => c.metadata.namespace }]
      : []),
    {
      key: 'command',
      label: 'Command',
      class: 'optional',
      render: (c) => html`<code title=${c.command ?? ''}>${c.command}</code>`,
    },
    { key: 'schedule', label: 'Schedule', render: (c) => schedule(c) },
    {
      key: 'subs',
      label: 'Subscriptions',
      class: 'optional',
      render: (c) => (c.subscriptions ?? []).join(', '),
    },
    { key: 'publish', label: 'Published', render: (c) => html`<${YesNo} value=${c.publish} />` },
    {
      key: 'rr',
      label: 'Round robin',
      class: 'optional',
      render: (c) => html`<${YesNo} value=${c.round_robin} />`,
    },
    {
      key: 'ttl',
      label: 'TTL',
      class: 'optional',
      render: (c) => (c.ttl && c.ttl > 0 ? formatDuration(c.ttl) : html`<span class="muted">none</span>`),
    },
    {
      key: 'actions',
      label: 'Actions',
      class: 'res-row-actions',
      render: (c) =>
        html`<button type="button" aria-label=${`Run ${c.metadata.name} now`} onClick=${() => setRunning(c)}>
            Run
          </button>
          <button type="button" aria-label=${`Silence ${c.metadata.name}`} onClick=${() => setSilencing(c)}>
            Silence
          </button>`,
    },
  ];

  return html`<section class="res-page">
    <h1>Checks</h1>
    <form
      class="toolbar"
      role="search"
      aria-label="Filter checks"
      onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}
    >
      <${FilterText} name="name" label="Name contains" grow />
      <${FilterText} name="sub" label="Subscription" />
      <${FilterText} name="labels" label="Label selector" placeholder="team == ops" />
      <button type="button" onClick=${list.reload}>Refresh</button>
    </form>
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <${Table}
      label="Checks"
      columns=${columns}
      rows=${list.items}
      rowKey=${checkKey}
      empty=${list.loading ? 'Loading…' : 'No check matches.'}
    />
    <${PageBar} list=${list} what="checks" />
    <${RunCheckDialog} check=${running} onClose=${() => setRunning(null)} />
    <${SilenceDialog}
      open=${!!silencing}
      onClose=${() => setSilencing(null)}
      namespace=${silencing?.metadata.namespace ?? ns}
      preset=${{ check: silencing?.metadata.name }}
      title=${`Silence check ${silencing?.metadata.name ?? ''}`}
    />
  </section>`;
}
