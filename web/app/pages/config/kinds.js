// @ts-check
import { html } from '../../html.js';
import { text } from './common.js';

/**
 * A configuration resource as the API answers it (core/v2, flat).
 * @typedef {{
 *   metadata?: { name?: string, namespace?: string, labels?: Record<string, string> | null,
 *     annotations?: Record<string, string> | null, created_by?: string },
 *   [field: string]: any,
 * }} Resource
 */

/**
 * One kind of configuration resource: its API plural, words, the columns of its list beside name,
 * namespace and labels, and the facts its detail shows above the whole definition.
 * @typedef {{
 *   plural: string,
 *   title: string,
 *   one: string,
 *   about: string,
 *   columns: import('../../components/table.js').Column<Resource>[],
 *   facts: (r: Resource) => Array<[string, unknown]>,
 * }} Kind
 */

/**
 * A cell of code (a command, an expression): monospace, truncated, whole in the tooltip.
 * @param {unknown} v
 */
const code = (v) => {
  const t = text(v);
  return t ? html`<code class="cfg-code" title=${t}>${t}</code>` : html`<span class="muted">—</span>`;
};

/** @param {unknown} v */
const plain = (v) => {
  const t = text(v);
  return t ? html`<span title=${t}>${t}</span>` : html`<span class="muted">—</span>`;
};

/** @param {Resource} h */
function handlerRuns(h) {
  const type = h.type ?? 'pipe';
  if (type === 'set') return text(h.handlers);
  if (type === 'tcp' || type === 'udp') return h.socket ? `${h.socket.host}:${h.socket.port}` : '';
  return h.command ?? '';
}

/** @param {Array<{ name?: string }> | null | undefined} refs */
const names = (refs) => (refs ?? []).map((r) => r?.name ?? '?');

/** @param {Resource} p */
const workflows = (p) =>
  /** @type {Array<{ name?: string, filters?: Array<{ name?: string }> | null, mutator?: { name?: string } | null, handler?: { name?: string } }>} */ (
    p.workflows ?? []
  );

/** @type {Kind[]} */
export const KINDS = [
  {
    plural: 'handlers',
    title: 'Handlers',
    one: 'handler',
    about: 'What is done with events: a command, a TCP or UDP socket, or a set of handlers.',
    columns: [
      { key: 'type', label: 'Type', render: (h) => plain(h.type ?? 'pipe') },
      { key: 'runs', label: 'Command, socket or handlers', render: (h) => code(handlerRuns(h)) },
      { key: 'filters', label: 'Filters', render: (h) => plain(h.filters), class: 'optional' },
      { key: 'mutator', label: 'Mutator', render: (h) => plain(h.mutator), class: 'optional' },
    ],
    facts: (h) => [
      ['Type', h.type ?? 'pipe'],
      ['Command', h.command],
      ['Socket', h.socket ? `${h.socket.host}:${h.socket.port}` : undefined],
      ['Handlers', h.handlers],
      ['Filters', h.filters],
      ['Mutator', h.mutator],
      ['Timeout', h.timeout ? `${h.timeout} s` : undefined],
      ['Runtime assets', h.runtime_assets],
      ['Secrets', (h.secrets ?? []).map((/** @type {{ name: string }} */ s) => s.name)],
    ],
  },
  {
    plural: 'filters',
    title: 'Filters',
    one: 'filter',
    about: 'Which events a handler takes: JavaScript expressions that allow or deny them.',
    columns: [
      { key: 'action', label: 'Action', render: (f) => plain(f.action) },
      { key: 'expressions', label: 'Expressions', render: (f) => code((f.expressions ?? []).join(' ; ')) },
      {
        key: 'when',
        label: 'Time windows',
        render: (f) => plain(f.when?.days ? Object.keys(f.when.days) : undefined),
        class: 'optional',
      },
    ],
    facts: (f) => [
      ['Action', f.action],
      ['Expressions', f.expressions],
      ['Time windows', f.when?.days],
      ['Runtime assets', f.runtime_assets],
    ],
  },
  {
    plural: 'mutators',
    title: 'Mutators',
    one: 'mutator',
    about: 'How an event is turned into what a handler reads: a command or JavaScript.',
    columns: [
      { key: 'type', label: 'Type', render: (m) => plain(m.type ?? 'pipe') },
      {
        key: 'runs',
        label: 'Command or JavaScript',
        render: (m) => code((m.type === 'javascript' ? m.eval : m.command)?.split('\n')[0]),
      },
      {
        key: 'timeout',
        label: 'Timeout',
        render: (m) => plain(m.timeout ? `${m.timeout} s` : ''),
        class: 'optional',
      },
    ],
    facts: (m) => [
      ['Type', m.type ?? 'pipe'],
      ['Command', m.command],
      ['JavaScript', m.eval],
      ['Timeout', m.timeout ? `${m.timeout} s` : undefined],
      ['Runtime assets', m.runtime_assets],
      ['Secrets', (m.secrets ?? []).map((/** @type {{ name: string }} */ s) => s.name)],
    ],
  },
  {
    plural: 'pipelines',
    title: 'Pipelines',
    one: 'pipeline',
    about: 'Workflows of filters, a mutator and a handler that checks and events name.',
    columns: [
      { key: 'count', label: 'Workflows', render: (p) => plain(workflows(p).length) },
      {
        key: 'handlers',
        label: 'Handlers',
        render: (p) => plain(workflows(p).map((w) => w.handler?.name ?? '?')),
      },
    ],
    facts: (p) =>
      workflows(p).map((w) => [
        `Workflow ${w.name ?? '?'}`,
        [
          ...names(w.filters).map((n) => `filter ${n}`),
          ...(w.mutator ? [`mutator ${w.mutator.name}`] : []),
          `handler ${w.handler?.name ?? '?'}`,
        ].join(' → '),
      ]),
  },
  {
    plural: 'assets',
    title: 'Assets',
    one: 'asset',
    about: 'Archives that agents and the backend fetch for checks, hooks, mutators and handlers.',
    columns: [
      {
        key: 'url',
        label: 'URL or builds',
        render: (a) => code(a.url ?? `${(a.builds ?? []).length} builds`),
      },
      {
        key: 'sha512',
        label: 'SHA-512',
        render: (a) => code(a.sha512 ? `${String(a.sha512).slice(0, 16)}…` : ''),
        class: 'optional',
      },
    ],
    facts: (a) => [
      ['URL', a.url],
      ['SHA-512', a.sha512],
      ['Filters', a.filters],
      ['Headers', a.headers ? Object.keys(a.headers) : undefined],
      ...(a.builds ?? []).map(
        (/** @type {{ url: string, filters?: string[] | null }} */ b, /** @type {number} */ i) =>
          /** @type {[string, unknown]} */ ([
            `Build ${i + 1}`,
            `${b.url}${b.filters?.length ? ` (${b.filters.join(' && ')})` : ''}`,
          ]),
      ),
    ],
  },
];

/** @param {string | undefined} plural */
export const kindOf = (plural) => KINDS.find((k) => k.plural === plural);
