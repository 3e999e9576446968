// @ts-check
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, nsPath, page } from '../api/client.js';
import { ALL, namespace } from '../namespace.js';
import { setParams } from '../router.js';
import { Table } from '../components/table.js';
import { confirm } from '../components/dialog.js';
import { ErrorMessage, notify, runAll } from '../components/notices.js';
import { YesNo } from '../components/resources/facts.js';
import { usePaged, PageBar, pageSizeOf } from '../components/resources/paged.js';
import { FilterText, clauseOf, joinClauses, param } from '../components/resources/filters.js';
import { SilenceDialog, silencePath, silenceWords } from '../components/resources/silence-dialog.js';
import { When, formatDuration } from '../components/resources/time.js';
import { messageOf } from '../api/errors.js';

/** @typedef {import('../components/resources/silence-dialog.js').Silence} Silence */

/** @param {Silence} s */
const silenceKey = (s) => `${s.metadata.namespace}/${s.metadata.name}`;

/** When it ends, for sorting: never is the latest of all. @param {Silence} s */
const endOf = (s) => (s.expire_at && s.expire_at > 0 ? s.expire_at : Infinity);

/** /silences: silenced entries; create, edit, expire now. @param {{ params: Record<string, string> }} _p */
export function Silences(_p) {
  const ns = namespace.value;
  const sub = param('sub');
  const check = param('check');
  const sort = param('sort');
  const [selected, setSelected] = useState(/** @type {Set<string>} */ (new Set()));
  const [editing, setEditing] = useState(/** @type {Silence | null} */ (null));
  const [creating, setCreating] = useState(false);

  /** @type {import('../components/resources/paged.js').Paged<Silence>} */
  const list = usePaged(
    (o) =>
      page(nsPath(ns, 'silenced'), {
        ...o,
        fieldSelector: joinClauses([
          clauseOf(sub, (v) => `silenced.subscription matches ${v}`),
          clauseOf(check, (v) => `silenced.check matches ${v}`),
        ]),
      }),
    [ns, sub, check],
    pageSizeOf(param('limit')),
  );

  let rows = list.items;
  if (sort === 'begin') rows = [...rows].sort((a, b) => (b.begin ?? 0) - (a.begin ?? 0));
  else if (sort === 'expire_at') rows = [...rows].sort((a, b) => endOf(b) - endOf(a));

  /** @param {Silence} s */
  const expire = async (s) => {
    const ok = await confirm({
      title: `Expire silence ${s.metadata.name}`,
      body: `Delete the silence of ${silenceWords(s)} in namespace ${s.metadata.namespace} now? Their events are no longer silenced.`,
      action: 'Expire now',
      danger: true,
    });
    if (!ok) return;
    try {
      await call(silencePath(s.metadata.namespace, s.metadata.name), { method: 'DELETE' });
      notify('ok', `Silence ${s.metadata.name} expired`);
    } catch (err) {
      notify('error', `Silence ${s.metadata.name} was not expired: ${messageOf(err)}`);
    }
    list.reload();
  };

  const picked = list.items.filter((s) => selected.has(silenceKey(s)));
  const expirePicked = async () => {
    const ok = await confirm({
      title: `Expire ${picked.length} silences`,
      body: `Delete ${picked.map((s) => s.metadata.name).join(', ')} now?`,
      action: 'Expire now',
      danger: true,
    });
    if (!ok) return;
    await runAll(
      'silences expired',
      picked.map((s) => () => call(silencePath(s.metadata.namespace, s.metadata.name), { method: 'DELETE' })),
    );
    setSelected(new Set());
    list.reload();
  };

  /** @type {import('../components/table.js').Column<Silence>[]} */
  const columns = [
    {
      key: 'sub',
      label: 'Subscription',
      render: (s) => s.subscription || html`<span class="muted">every entity</span>`,
    },
    { key: 'check', label: 'Check', render: (s) => s.check || html`<span class="muted">every check</span>` },
    ...(ns === ALL
      ? [{ key: 'ns', label: 'Namespace', render: (/** @type {Silence} */ s) => s.metadata.namespace }]
      : []),
    {
      key: 'reason',
      label: 'Reason',
      class: 'optional',
      render: (s) => html`<span title=${s.reason ?? ''}>${s.reason}</span>`,
    },
    { key: 'creator', label: 'Creator', class: 'optional', render: (s) => s.creator ?? '' },
    {
      key: 'begin',
      label: 'Begins',
      sort: 'begin',
      class: 'optional',
      render: (s) => html`<${When} at=${s.begin} />`,
    },
    {
      key: 'expires',
      label: 'Expires',
      sort: 'expire_at',
      render: (s) =>
        html`<span
          title=${s.expire && s.expire > 0 ? `${formatDuration(s.expire)} after it begins` : 'no expiry'}
          ><${When} at=${s.expire_at} none="never"
        /></span>`,
    },
    {
      key: 'resolve',
      label: 'On resolve',
      class: 'optional',
      render: (s) => html`<${YesNo} value=${s.expire_on_resolve} />`,
    },
    {
      key: 'actions',
      label: 'Actions',
      class: 'res-row-actions',
      render: (s) =>
        html`<button
            type="button"
            aria-label=${`Edit silence ${s.metadata.name}`}
            onClick=${() => setEditing(s)}
          >
            Edit
          </button>
          <button
            type="button"
            aria-label=${`Expire silence ${s.metadata.name}`}
            onClick=${() => void expire(s)}
          >
            Expire
          </button>`,
    },
  ];

  return html`<section class="res-page">
    <div class="res-head">
      <h1>Silences</h1>
      <div class="res-actions">
        <button type="button" class="primary" onClick=${() => setCreating(true)}>New silence</button>
      </div>
    </div>
    <form
      class="toolbar"
      role="search"
      aria-label="Filter silences"
      onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}
    >
      <${FilterText} name="sub" label="Subscription contains" grow />
      <${FilterText} name="check" label="Check contains" grow />
      <button type="button" onClick=${list.reload}>Refresh</button>
    </form>
    ${
      picked.length > 0 &&
      html`<div class="toolbar res-bulk" role="group" aria-label="Selected silences">
        <span>${picked.length} selected</span>
        <button type="button" class="danger" onClick=${expirePicked}>Expire selected</button>
        <button type="button" onClick=${() => setSelected(new Set())}>Clear selection</button>
      </div>`
    }
    ${list.error ? html`<${ErrorMessage} error=${list.error} retry=${list.reload} />` : null}
    <${Table}
      label="Silences"
      columns=${columns}
      rows=${rows}
      rowKey=${silenceKey}
      rowLabel=${(/** @type {Silence} */ s) => s.metadata.name}
      selected=${selected}
      onSelect=${setSelected}
      sort=${sort}
      onSort=${(/** @type {string} */ k) => setParams({ sort: k === sort ? undefined : k })}
      empty=${list.loading ? 'Loading…' : 'No silences.'}
    />
    <${PageBar} list=${list} what="silences" />
    <${SilenceDialog}
      open=${creating}
      onClose=${() => setCreating(false)}
      onSaved=${list.reload}
      namespace=${ns}
    />
    <${SilenceDialog}
      open=${!!editing}
      onClose=${() => setEditing(null)}
      onSaved=${list.reload}
      namespace=${editing?.metadata.namespace ?? ns}
      entry=${editing ?? undefined}
    />
  </section>`;
}
