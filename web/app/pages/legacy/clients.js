// @ts-check
import { useEffect, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { json } from '../../api/client.js';
import { useAsync } from '../../hooks.js';
import { route } from '../../router.js';
import { Table } from '../../components/table.js';
import { confirm } from '../../components/dialog.js';
import { ErrorMessage, notify } from '../../components/notices.js';
import { Ago } from '../../components/status.js';
import { UrlFilter, byName, text } from '../config/common.js';
import { LEGACY, legacyMessage, legacyPath } from './api.js';

/** @typedef {{ name: string, address?: string, subscriptions?: string[], timestamp?: number, version?: string }} Client */

/** How often, and how many times, the list is read again while a deletion is under way. */
const RECHECK_MS = 1000;
const RECHECKS = 15;

/**
 * The legacy clients (the legacy namespace's entities): name, address, subscriptions, last
 * keepalive, version; each can be deleted (its failing events resolved first, as the legacy API
 * does). Filtered by `name` in the URL.
 */
export function LegacyClients() {
  const name = route.value.params.get('name') ?? '';
  const list = useAsync((signal) => json(`${LEGACY}/clients`, { signal }), []);
  const [deleting, setDeleting] = useState(/** @type {Set<string>} */ (new Set()));
  const [rechecks, setRechecks] = useState(0);
  const clients = /** @type {Client[]} */ (list.data ?? []);

  // A deletion is answered at once (202) and done after: read the list again until it is.
  useEffect(() => {
    if (!deleting.size) return;
    const present = new Set(clients.map((c) => c.name));
    const still = new Set([...deleting].filter((n) => present.has(n)));
    if (still.size && rechecks >= RECHECKS) {
      notify('error', `Still listed after ${RECHECKS} s: ${[...still].join(', ')}. Refresh to look again.`);
      setDeleting(new Set());
      return;
    }
    if (still.size !== deleting.size) setDeleting(still);
    if (!still.size) return;
    const t = setTimeout(() => {
      setRechecks((n) => n + 1);
      list.reload();
    }, RECHECK_MS);
    return () => clearTimeout(t);
  }, [list.data, deleting]);

  /** @param {Client} c */
  const remove = async (c) => {
    const ok = await confirm({
      title: `Delete client ${c.name}?`,
      body: `Its failing events are resolved (their handlers see it), then the client and all its events are deleted. A client that is still running registers again with its next keepalive.`,
      action: 'Delete client',
      danger: true,
    });
    if (!ok) return;
    try {
      await json(legacyPath('clients', c.name), { method: 'DELETE' });
      notify('ok', `Client ${c.name} is being deleted`);
      setRechecks(0);
      setDeleting((d) => new Set([...d, c.name]));
      list.reload();
    } catch (err) {
      notify('error', `Could not delete client ${c.name}: ${legacyMessage(err, `client ${c.name}`)}`);
    }
  };

  const rows = byName(clients, (c) => c.name, name);
  /** @type {import('../../components/table.js').Column<Client>[]} */
  const columns = [
    { key: 'name', label: 'Name', render: (c) => c.name },
    { key: 'address', label: 'Address', render: (c) => c.address, class: 'optional' },
    {
      key: 'subscriptions',
      label: 'Subscriptions',
      render: (c) => html`<span title=${text(c.subscriptions)}>${text(c.subscriptions)}</span>`,
    },
    { key: 'timestamp', label: 'Last keepalive', render: (c) => html`<${Ago} at=${c.timestamp} />` },
    { key: 'version', label: 'Version', render: (c) => c.version, class: 'optional' },
    {
      key: 'actions',
      label: 'Actions',
      render: (c) =>
        deleting.has(c.name)
          ? html`<span class="muted">deleting…</span>`
          : html`<button
              type="button"
              class="cfg-small"
              aria-label=${`Delete client ${c.name}`}
              onClick=${() => remove(c)}
            >
              Delete
            </button>`,
    },
  ];
  return html`<div>
    <div class="toolbar" role="search" aria-label="Filter clients">
      <${UrlFilter} param="name" label="Name contains" placeholder="e.g. web" />
      <button type="button" onClick=${list.reload} disabled=${list.loading}>Refresh</button>
    </div>
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <p class="cfg-count" role="status">
      ${list.loading && !list.data ? 'Loading…' : `${rows.length} ${rows.length === 1 ? 'client' : 'clients'}`}
    </p>
    <${Table}
      label="Legacy clients"
      columns=${columns}
      rows=${rows}
      rowKey=${(/** @type {Client} */ c) => c.name}
      empty=${list.loading ? 'Loading…' : list.error ? 'The clients could not be read.' : 'No clients.'}
    />
  </div>`;
}
