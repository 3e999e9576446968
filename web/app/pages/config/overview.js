// @ts-check
import { html } from '../../html.js';
import { all, nsPath } from '../../api/client.js';
import { messageOf } from '../../api/errors.js';
import { useAsync } from '../../hooks.js';
import { ALL, namespace } from '../../namespace.js';
import { href, pathOf } from '../../router.js';
import { KINDS } from './kinds.js';

/**
 * How many of each kind there are in the namespace, each a link to its list; a kind the user may
 * not list says so in its card, the others still count.
 */
export function ConfigOverview() {
  const ns = namespace.value;
  const counts = useAsync(
    (signal) =>
      Promise.all(
        KINDS.map((k) =>
          all(nsPath(ns, k.plural), { signal }).then(
            (items) => ({ count: items.length, error: undefined }),
            (err) => ({ count: undefined, error: messageOf(err) }),
          ),
        ),
      ),
    [ns],
  );
  const where = ns === ALL ? 'every namespace' : `namespace ${ns}`;
  return html`<section class="cfg-page" aria-labelledby="cfg-title">
    <h1 id="cfg-title">Configuration</h1>
    <p class="muted">The pipeline's resources in ${where}, read only.</p>
    <ul class="cfg-cards">
      ${KINDS.map((k, i) => {
        const c = counts.data?.[i];
        return html`<li class="card">
          <h2>
            <a href=${href(pathOf('/config', k.plural), { namespace: ns })}>${k.title}</a>
          </h2>
          <p class="cfg-card-count">
            ${
              !c
                ? html`<span class="muted">counting…</span>`
                : c.error
                  ? html`<span class="error-text">${c.error}</span>`
                  : html`<strong>${c.count}</strong> ${c.count === 1 ? k.one : k.title.toLowerCase()}`
            }
          </p>
          <p class="muted">${k.about}</p>
        </li>`;
      })}
    </ul>
  </section>`;
}
