// @ts-check
import { html } from '../html.js';
import { ALL, namespace } from '../namespace.js';
import { href, pathOf, route } from '../router.js';
import { KINDS, kindOf } from './config/kinds.js';
import { ConfigOverview } from './config/overview.js';
import { ConfigList } from './config/list.js';
import { ConfigDetail } from './config/detail.js';

/**
 * `/config`: an overview of the pipeline's resources; `/config/<kind>` (handlers, filters, mutators,
 * pipelines, assets): its list, filtered by `name` and `label`; `?detail=<name>` (and `detail_ns`
 * under "all namespaces") one resource's definition. Read only.
 * @param {{ params: Record<string, string> }} p
 */
export function Config({ params }) {
  if (!params.kind) return html`<${ConfigOverview} />`;
  const kind = kindOf(params.kind);
  if (!kind)
    return html`<section class="cfg-page">
      <h1>No such configuration</h1>
      <p>
        The configuration pages are
        ${KINDS.map(
          (k, i) =>
            html`${i ? ', ' : ''}<a href=${href(pathOf('/config', k.plural), { namespace: namespace.value })}
                >${k.title.toLowerCase()}</a
              >`,
        )}.
      </p>
    </section>`;
  const q = route.value.params;
  const detail = q.get('detail');
  if (detail) {
    const ns = namespace.value === ALL ? (q.get('detail_ns') ?? '') : namespace.value;
    return html`<${ConfigDetail} key=${`${ns}/${detail}`} kind=${kind} name=${detail} ns=${ns} />`;
  }
  return html`<${ConfigList} key=${kind.plural} kind=${kind} />`;
}
