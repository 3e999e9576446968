// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';
import { answered, coreApi } from '../harness/api.ts';
import { bodyText, fuzz, jsonValue, mutated, shadowed } from '../harness/fuzz.ts';

// Fuzzing the REST API of one real backend (issue 13): POST/PUT bodies of every resource kind
// (arbitrary JSON values, arbitrary text, mutated valid bodies, valid bodies with a `{"toString": ...}`
// value) and list query strings (labelSelector, fieldSelector, limit, continue). Every answer is a
// success or a 4xx `{message, code}`; a refused write stores nothing (the lists afterwards hold only
// what was there plus what was accepted); the backend keeps serving. Each request is bounded by the
// harness's per-request timeout.

const BODY_RUNS = 3_000;
const QUERY_RUNS = 2_000;
const PATCH_RUNS = 1_000;

let backend: Backend;
const api = coreApi(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'fuzz-api' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await backend?.stop();
});

const meta = (name: string) => ({ name, namespace: 'default', labels: { fuzz: 'yes' } });
const SHA = 'a'.repeat(128);
const entity = { metadata: meta('fz-entity'), entity_class: 'proxy', subscriptions: ['linux'] };
const check = { metadata: meta('fz-check'), command: 'true', status: 1, output: 'x', interval: 60 };

/** Route segment, whether namespaced, a valid body (named fz-<kind>), and how to PUT it. */
const KINDS: Array<{ plural: string; namespaced: boolean; valid: Record<string, unknown>; put: string }> = [
  ['assets', { url: 'https://example.com/a.tar.gz', sha512: SHA }],
  ['checks', { command: 'true', interval: 60, subscriptions: ['linux'] }],
  ['filters', { action: 'allow', expressions: ['event.check.status == 0'] }],
  ['handlers', { type: 'pipe', command: 'cat' }],
  ['hooks', { command: 'true', timeout: 10 }],
  ['mutators', { type: 'pipe', command: 'cat' }],
  [
    'pipelines',
    { workflows: [{ name: 'w', handler: { name: 'h', type: 'Handler', api_version: 'core/v2' } }] },
  ],
  ['roles', { rules: [{ verbs: ['get'], resources: ['checks'] }] }],
  ['rolebindings', { role_ref: { type: 'Role', name: 'r' }, subjects: [{ type: 'User', name: 'u' }] }],
  ['entities', { entity_class: 'proxy', subscriptions: ['linux'] }],
].map(([plural, rest]) => ({
  plural: plural as string,
  namespaced: true,
  valid: { metadata: meta(`fz-${plural as string}`), ...(rest as object) },
  put: `/namespaces/default/${plural as string}/fz-${plural as string}`,
}));
KINDS.push(
  {
    plural: 'silenced',
    namespaced: true,
    valid: { metadata: meta('linux:fz'), subscription: 'linux', check: 'fz', expire: 600 },
    put: '/namespaces/default/silenced/linux:fz',
  },
  {
    plural: 'clusterroles',
    namespaced: false,
    valid: { metadata: { name: 'fz-clusterroles' }, rules: [{ verbs: ['get'], resources: ['checks'] }] },
    put: '/clusterroles/fz-clusterroles',
  },
  {
    plural: 'clusterrolebindings',
    namespaced: false,
    valid: {
      metadata: { name: 'fz-crb' },
      role_ref: { type: 'ClusterRole', name: 'cr' },
      subjects: [{ type: 'Group', name: 'g' }],
    },
    put: '/clusterrolebindings/fz-crb',
  },
  {
    plural: 'events',
    namespaced: true,
    valid: { entity, check, timestamp: 1700000000 },
    put: '/namespaces/default/events/fz-entity/fz-check',
  },
);
const listPath = (k: (typeof KINDS)[number]) =>
  k.namespaced ? `/namespaces/default/${k.plural}` : `/${k.plural}`;

/** Names of what a list holds (events: entity/check). */
async function names(k: (typeof KINDS)[number]): Promise<string[]> {
  const r = await api<Array<Record<string, any>>>(listPath(k));
  assert.is(r.status, 200, `list ${k.plural}`);
  return r.body
    .map((x) =>
      k.plural === 'events' ? `${x.entity?.metadata?.name}/${x.check?.metadata?.name}` : x.metadata?.name,
    )
    .sort();
}

test(`REST bodies: ${BODY_RUNS.toLocaleString('en')} POST/PUT bodies over ${KINDS.length} resource kinds are accepted or a 4xx {message, code}; refused ones store nothing`, async () => {
  const before = new Map<string, string[]>();
  for (const k of KINDS) before.set(k.plural, await names(k));
  const accepted = new Map<string, Set<string>>(KINDS.map((k) => [k.plural, new Set()]));
  const body = (k: (typeof KINDS)[number]) =>
    fc.oneof(
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => ({ raw: s })) },
      { weight: 2, arbitrary: jsonValue().map((x) => ({ json: x })) },
      { weight: 4, arbitrary: mutated(k.valid).map((x) => ({ json: x })) },
      { weight: 1, arbitrary: shadowed(k.valid).map((x) => ({ json: x })) },
    );
  await fuzz(
    'REST bodies',
    fc.asyncProperty(
      fc.constantFrom(...KINDS).chain((k) => fc.tuple(fc.constant(k), fc.boolean(), body(k))),
      async ([k, put, b]) => {
        const path = put ? k.put : listPath(k);
        const method = put ? 'PUT' : 'POST';
        const r =
          'raw' in b
            ? await api(path, method, b.raw, { 'Content-Type': 'application/json' })
            : await api(path, method, b.json === null ? 'null' : b.json, {
                'Content-Type': 'application/json',
              });
        if (answered(r, `${method} ${path} ${JSON.stringify(b).slice(0, 300)}`)) {
          // What an accepted write may have stored: the name of its path, or its body's.
          const j = ('json' in b ? b.json : undefined) as Record<string, any> | undefined;
          const set = accepted.get(k.plural)!;
          set.add(
            k.put
              .split('/')
              .slice(k.plural === 'events' ? -2 : -1)
              .join('/'),
          );
          // Only strings name anything (a body's `{"toString": 1}` would throw in a template literal).
          const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
          if (typeof j?.metadata?.name === 'string') set.add(j.metadata.name);
          if (k.plural === 'events') {
            set.add(`${str(j?.entity?.metadata?.name)}/${str(j?.check?.metadata?.name)}`);
            // An event of an unknown entity creates it (as the reference does).
            accepted.get('entities')!.add(str(j?.entity?.metadata?.name) ?? k.put.split('/').at(-2)!);
          }
          if (k.plural === 'silenced') set.add(`${str(j?.subscription) || '*'}:${str(j?.check) || '*'}`);
        }
      },
    ),
    BODY_RUNS,
  );
  for (const k of KINDS) {
    const allowed = new Set([...before.get(k.plural)!, ...accepted.get(k.plural)!]);
    const after = await names(k);
    const stray = after.filter((n) => !allowed.has(n));
    assert.equal(stray, [], `${k.plural}: only accepted writes are stored`);
  }
  assert.is((await backend.health()).status, 200, 'the backend still serves');
});

const LISTS = [...KINDS.map(listPath), '/namespaces', '/users', '/apikeys'];
const selectorText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom('==', '!=', ' in ', ' notin ', ' matches ', '&&', '(', ')', ',', '"', ' '),
        fc.constantFrom('fuzz', 'yes', 'check.status', 'entity.subscriptions', 'metadata.name', 'linux'),
        fc.string({ maxLength: 5 }),
      ),
      { maxLength: 8 },
    )
    .map((t) => t.join('')),
);
const param = fc.oneof(
  fc.tuple(fc.constantFrom('labelSelector', 'fieldSelector'), selectorText),
  fc.tuple(fc.constant('limit'), fc.oneof(fc.integer().map(String), fc.string({ maxLength: 8 }))),
  fc.tuple(
    fc.constant('continue'),
    fc.oneof(fc.string({ maxLength: 30 }), fc.base64String({ maxLength: 40 })),
  ),
  fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })),
);

test(`list query strings: ${QUERY_RUNS.toLocaleString('en')} lists with arbitrary selectors, limit and continue are a 200 list or a 4xx {message, code}`, async () => {
  await fuzz(
    'list query strings',
    fc.asyncProperty(
      fc.constantFrom(...LISTS),
      fc.array(param, { minLength: 1, maxLength: 4 }),
      async (path, params) => {
        const q = new URLSearchParams(params);
        const r = await api(`${path}?${q}`);
        if (answered(r, `GET ${path}?${q}`)) assert.ok(Array.isArray(r.body), `GET ${path}?${q}: a list`);
      },
    ),
    QUERY_RUNS,
  );
  assert.is((await backend.health()).status, 200, 'the backend still serves');
});

const PATCHED = KINDS.filter((k) => !['events'].includes(k.plural));

test(`PATCH: ${PATCH_RUNS.toLocaleString('en')} merge patches of stored resources are accepted or a 4xx {message, code} that leaves the resource unchanged`, async () => {
  // Each kind's valid resource is stored first (PUT), so every PATCH has something to change.
  for (const k of PATCHED) {
    const r = await api(k.put, 'PUT', k.valid);
    assert.ok(r.status >= 200 && r.status < 300, `PUT ${k.put}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  await fuzz(
    'REST PATCH bodies',
    fc.asyncProperty(
      fc.constantFrom(...PATCHED).chain((k) => fc.tuple(fc.constant(k), bodyText(k.valid))),
      async ([k, body]) => {
        const before = await api(k.put);
        const r = await api(k.put, 'PATCH', body, { 'Content-Type': 'application/merge-patch+json' });
        if (!answered(r, `PATCH ${k.put} ${body.slice(0, 300)}`)) {
          const after = await api(k.put);
          // As JSON text: uvu's deep equality tells apart objects whose own `constructor` keys hold
          // equal objects (it compares `a.constructor === b.constructor`).
          assert.is(
            JSON.stringify(after.body),
            JSON.stringify(before.body),
            `PATCH ${k.put} ${body.slice(0, 300)}: refused, the resource is unchanged`,
          );
        }
      },
    ),
    PATCH_RUNS,
  );
  assert.is((await backend.health()).status, 200, 'the backend still serves');
});

test.run();
