// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../../html.js';
import { call, json } from '../../api/client.js';
import { useAsync } from '../../hooks.js';
import { route } from '../../router.js';
import { Table } from '../../components/table.js';
import { Dialog, confirm } from '../../components/dialog.js';
import { ErrorMessage, notify, runAll } from '../../components/notices.js';
import { JsonView, UrlFilter, byName } from '../config/common.js';
import { LEGACY, legacyMessage, legacyPath } from './api.js';

/** @typedef {{ path: string, content: Record<string, unknown>, expire: number }} Stash */

/** @param {number} s seconds */
function duration(s) {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/**
 * The stashes (cluster-wide): path, content, expiry; one can be shown whole, deleted, or several
 * selected and deleted together. Filtered by `path` in the URL.
 */
export function LegacyStashes() {
  const needle = route.value.params.get('path') ?? '';
  const list = useAsync((signal) => json(`${LEGACY}/stashes`, { signal }), []);
  const [selected, setSelected] = useState(/** @type {Set<string>} */ (new Set()));
  const [shown, setShown] = useState(/** @type {Stash | null} */ (null));
  const rows = byName(/** @type {Stash[]} */ (list.data ?? []), (s) => s.path, needle);
  const picked = rows.filter((s) => selected.has(s.path));

  /** @param {string} path */
  const deleteOne = (path) => call(legacyPath('stashes', path), { method: 'DELETE' });

  /** @param {Stash} s */
  const remove = async (s) => {
    const ok = await confirm({
      title: `Delete stash ${s.path}?`,
      body: 'Handlers and dashboards that read this stash no longer find it.',
      action: 'Delete stash',
      danger: true,
    });
    if (!ok) return;
    try {
      await deleteOne(s.path);
      notify('ok', `Stash ${s.path} deleted`);
    } catch (err) {
      notify('error', `Could not delete stash ${s.path}: ${legacyMessage(err, `stash ${s.path}`)}`);
    }
    setSelected((sel) => new Set([...sel].filter((p) => p !== s.path)));
    list.reload();
  };

  const removePicked = async () => {
    const paths = picked.map((s) => s.path);
    const ok = await confirm({
      title: `Delete ${paths.length} ${paths.length === 1 ? 'stash' : 'stashes'}?`,
      body: paths.join(', '),
      action: 'Delete',
      danger: true,
    });
    if (!ok) return;
    await runAll(
      'stashes deleted',
      paths.map((p) => () => deleteOne(p)),
    );
    setSelected(new Set());
    list.reload();
  };

  /** @type {import('../../components/table.js').Column<Stash>[]} */
  const columns = [
    {
      key: 'path',
      label: 'Path',
      render: (s) =>
        html`<button
          type="button"
          class="link"
          aria-label=${`Show stash ${s.path}`}
          onClick=${() => setShown(s)}
        >
          ${s.path}
        </button>`,
    },
    {
      key: 'content',
      label: 'Content',
      render: (s) => {
        const t = JSON.stringify(s.content);
        return html`<code class="cfg-code" title=${t}>${t}</code>`;
      },
      // Narrow screens leave it out: "Show" has it whole.
      class: 'optional',
    },
    {
      key: 'expire',
      label: 'Expires',
      render: (s) => (s.expire < 0 ? html`<span class="muted">never</span>` : `in ${duration(s.expire)}`),
    },
    {
      key: 'actions',
      label: 'Actions',
      render: (s) =>
        html`<button
          type="button"
          class="cfg-small"
          aria-label=${`Delete stash ${s.path}`}
          onClick=${() => remove(s)}
        >
          Delete
        </button>`,
    },
  ];
  return html`<div>
    <div class="toolbar" role="search" aria-label="Filter stashes">
      <${UrlFilter} param="path" label="Path contains" placeholder="e.g. silence/" />
      <button type="button" onClick=${list.reload} disabled=${list.loading}>Refresh</button>
      <button
        type="button"
        class=${picked.length ? 'danger' : ''}
        disabled=${!picked.length}
        onClick=${removePicked}
      >
        Delete selected (${picked.length})
      </button>
    </div>
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <p class="cfg-count" role="status">
      ${list.loading && !list.data ? 'Loading…' : `${rows.length} ${rows.length === 1 ? 'stash' : 'stashes'}`}
    </p>
    <${Table}
      label="Stashes"
      columns=${columns}
      rows=${rows}
      rowKey=${(/** @type {Stash} */ s) => s.path}
      rowLabel=${(/** @type {Stash} */ s) => `stash ${s.path}`}
      selected=${selected}
      onSelect=${setSelected}
      empty=${list.loading ? 'Loading…' : list.error ? 'The stashes could not be read.' : 'No stashes.'}
    />
    <${Dialog} title=${`Stash ${shown?.path ?? ''}`} open=${!!shown} onClose=${() => setShown(null)}>
      ${
        shown &&
        html`<p>
            ${shown.expire < 0 ? 'Never expires.' : `Expires in ${duration(shown.expire)} (when listed).`}
          </p>
          <${JsonView} value=${shown.content} title="Content" />
          <div class="actions">
            <button type="button" onClick=${() => setShown(null)}>Close</button>
          </div>`
      }
    <//>
  </div>`;
}
