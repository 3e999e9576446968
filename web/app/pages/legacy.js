// @ts-check
import { html } from '../html.js';
import { json } from '../api/client.js';
import { useAsync } from '../hooks.js';
import { href, pathOf } from '../router.js';
import { namespace } from '../namespace.js';
import { ErrorMessage } from '../components/notices.js';
import { LEGACY } from './legacy/api.js';
import { LegacyClients } from './legacy/clients.js';
import { LegacyAggregates } from './legacy/aggregates.js';
import { LegacyStashes } from './legacy/stashes.js';

/** The views, by path: [path part, title, what it shows]. */
const VIEWS = /** @type {const} */ ([
  ['clients', 'Clients', LegacyClients],
  ['aggregates', 'Aggregates', LegacyAggregates],
  ['stashes', 'Stashes', LegacyStashes],
]);

/**
 * `/legacy` and `/legacy/<view>`: the legacy API's clients, aggregates and stashes, read through
 * the REST API (`/api/legacy`) with the user's own token and roles; says so when the node's legacy
 * API is off.
 * @param {{ params: Record<string, string> }} p
 */
export function Legacy({ params }) {
  const state = useAsync(
    (signal) => /** @type {Promise<import('./legacy/api.js').LegacyState>} */ (json(LEGACY, { signal })),
    [],
  );
  const current = params.kind ?? 'clients';
  const view = VIEWS.find(([k]) => k === current);
  const s = state.data;
  let body;
  if (state.error) body = html`<${ErrorMessage} error=${state.error} retry=${state.reload} />`;
  else if (!s) body = html`<p role="status">Loading…</p>`;
  else if (!s.enabled)
    body = html`<div class="error-box" role="alert">
      <p><strong>The legacy API is off on this node.</strong></p>
      <p>
        ${'It was started with '}<code>--legacy-api-port 0</code
        >${', so there are no legacy clients, aggregates or stashes to show.'}
      </p>
    </div>`;
  else if (!view) body = html`<p>No such legacy view.</p>`;
  else {
    const [, , View] = view;
    body = html`<p class="muted">
        ${
          current === 'stashes'
            ? 'Stashes belong to no namespace: these are the whole cluster’s.'
            : html`${'The legacy API shows namespace '}<strong>${s.namespace}</strong>${' (its '}<code>--legacy-api-namespace</code>${'), whatever namespace is picked above.'}`
        }
      </p>
      <${View} key=${current} />`;
  }
  return html`<section class="cfg-page" aria-labelledby="legacy-title">
    <h1 id="legacy-title">Legacy${view ? `: ${view[1]}` : ''}</h1>
    ${
      s?.enabled &&
      html`<nav class="tabs cfg-tabs" aria-label="Legacy views">
        ${VIEWS.map(
          ([k, title]) =>
            html`<a
              href=${href(pathOf('/legacy', k), { namespace: namespace.value })}
              aria-current=${k === current ? 'page' : undefined}
              >${title}</a
            >`,
        )}
      </nav>`
    }
    ${body}
  </section>`;
}
