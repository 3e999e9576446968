// @ts-check
import { html } from '../../html.js';
import { json, nsPath } from '../../api/client.js';
import { useAsync } from '../../hooks.js';
import { href, pathOf, route } from '../../router.js';
import { ErrorMessage } from '../../components/notices.js';
import { JsonView, Labels, text } from './common.js';

/**
 * One resource: the facts that matter for its kind, its metadata, and the whole definition as the
 * API answers it (JSON, with a copy button). Read only.
 * @param {{ kind: import('./kinds.js').Kind, name: string, ns: string }} p
 */
export function ConfigDetail({ kind, name, ns }) {
  const one = useAsync(
    (signal) =>
      json(`${nsPath(ns, kind.plural)}/${encodeURIComponent(name)}`, {
        signal,
      }),
    [kind.plural, ns, name],
  );
  const back = new URLSearchParams(route.value.params);
  back.delete('detail');
  back.delete('detail_ns');
  const r = /** @type {import('./kinds.js').Resource | undefined} */ (one.data);
  const facts = r ? kind.facts(r).filter(([, v]) => text(v) !== '') : [];
  return html`<section class="cfg-page" aria-labelledby="cfg-title">
    <p class="cfg-crumbs">
      <a href=${href('/config', { namespace: back.get('namespace') ?? undefined })}>Configuration</a>
      ${' / '}<a href=${href(pathOf('/config', kind.plural), back)}>${kind.title}</a>
    </p>
    <h1 id="cfg-title">${kind.one[0]?.toUpperCase()}${kind.one.slice(1)} ${name}</h1>
    ${one.error ? html`<${ErrorMessage} error=${one.error} retry=${one.reload} />` : null}
    ${!r && !one.error ? html`<p role="status">Loading…</p>` : null}
    ${
      r &&
      html`<dl class="facts cfg-facts">
          <dt>Namespace</dt>
          <dd>${r.metadata?.namespace ?? ns}</dd>
          ${facts.map(
            ([label, v]) =>
              html`<dt>${label}</dt>
                <dd>
                  ${
                    Array.isArray(v) && v.length > 1
                      ? html`<ul class="cfg-values">
                          ${v.map((x) => html`<li><code>${text(x)}</code></li>`)}
                        </ul>`
                      : html`<code>${text(v)}</code>`
                  }
                </dd>`,
          )}
          <dt>Labels</dt>
          <dd><${Labels} labels=${r.metadata?.labels} /></dd>
          ${
            Object.keys(r.metadata?.annotations ?? {}).length > 0 &&
            html`<dt>Annotations</dt>
              <dd><${Labels} labels=${r.metadata?.annotations} /></dd>`
          }
          ${
            r.metadata?.created_by &&
            html`<dt>Created by</dt>
              <dd>${r.metadata.created_by}</dd>`
          }
        </dl>
        <${JsonView} value=${r} title="Definition" />`
    }
  </section>`;
}
