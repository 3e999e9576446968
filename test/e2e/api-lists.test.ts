// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend, type JsonResponse } from '../harness/index.ts';
import { coreApi, created, isError, type Body } from '../harness/api.ts';

// Lists across the API: pagination walks (limit, the Monitor-Continue header, no duplicates or
// gaps) over checks, events and entities; bad paging parameters; label and field selectors, and
// malformed ones. Every error is `{"message", "code"}`. The other errors of the API (bodies, size,
// routes) and the system routes are in api-errors.test.ts.

let backend: Backend;

const api = coreApi(() => backend);

const rand = () => Math.random().toString(36).slice(2, 7);

async function newNamespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${rand()}`;
  created(await api('/namespaces', 'POST', { name: ns }), `namespace ${ns}`);
  return ns;
}

/** Walks a list page by page; returns each page's items and whether it carried the continue header. */
async function walk(path: string, limit: number): Promise<Array<{ items: Body[]; next: string | null }>> {
  const pages: Array<{ items: Body[]; next: string | null }> = [];
  let token: string | null = null;
  for (let i = 0; i < 100; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const r: JsonResponse<Body[]> = await api<Body[]>(
      `${path}${sep}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    assert.is(r.status, 200, `page ${i + 1} of ${path}: ${JSON.stringify(r.body)}`);
    assert.ok(Array.isArray(r.body));
    token = r.headers.get('Monitor-Continue');
    pages.push({ items: r.body, next: token });
    if (!token) return pages;
  }
  throw new Error(`more than 100 pages of ${path}`);
}

const eventId = (e: Body) =>
  `${e.metadata?.namespace}/${e.entity?.metadata?.name}/${e.check?.metadata?.name}`;
const nameOf = (x: Body) => x.metadata?.name as string;

/** Lists trail writes by the read model's watch. */
const listUntil = (path: string, ok: (items: Body[]) => boolean, what: string) =>
  waitFor(
    async () => {
      const r = await api<Body[]>(path);
      return r.status === 200 && Array.isArray(r.body) && ok(r.body) ? r.body : undefined;
    },
    { timeoutMs: 8000, intervalMs: 50, what },
  );

test.before(async () => {
  backend = await startBackend({ name: 'api-lists' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
});

test.after(async () => {
  await backend?.stop();
});

// --- pagination ---------------------------------------------------------------------------------

test('pagination: 25 checks with limit=10 are 10 + 10 + 5, continue header on the first two pages only', async () => {
  const ns = await newNamespace('pg-checks');
  const names = Array.from({ length: 25 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
  await Promise.all(
    names.map(async (name) =>
      created(
        await api(`/namespaces/${ns}/checks`, 'POST', { command: 'true', interval: 60, metadata: { name } }),
        name,
      ),
    ),
  );

  const pages = await walk(`/namespaces/${ns}/checks`, 10);
  assert.equal(
    pages.map((p) => p.items.length),
    [10, 10, 5],
  );
  assert.ok(pages[0]!.next && pages[1]!.next, 'continue header on pages 1 and 2');
  assert.is(pages[2]!.next, null, 'no continue header on the last page');
  const seen = pages.flatMap((p) => p.items.map(nameOf));
  assert.equal(seen, names, 'every check once, in order');

  // Without limit: everything, no header.
  const all = await api<Body[]>(`/namespaces/${ns}/checks`);
  assert.is(all.body.length, 25);
  assert.is(all.headers.get('Monitor-Continue'), null);
  // A limit that takes all: no header either.
  const exact = await api<Body[]>(`/namespaces/${ns}/checks?limit=25`);
  assert.is(exact.body.length, 25);
  assert.is(exact.headers.get('Monitor-Continue'), null, 'no header when nothing is left');
  // The all-namespaces list pages too.
  const across = await walk('/checks', 7);
  const acrossIds = across.flatMap((p) => p.items.map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
  assert.is(new Set(acrossIds).size, acrossIds.length, 'no duplicates across namespaces');
  for (const n of names) assert.ok(acrossIds.includes(`${ns}/${n}`), `${n} in the all-namespaces walk`);
});

test('pagination: 30 events (and their entities) walk without duplicates or gaps', async () => {
  const ns = await newNamespace('pg-events');
  const ids: string[] = [];
  for (let e = 0; e < 6; e++) {
    for (let c = 0; c < 5; c++) {
      const entity = `ent-${e}`,
        check = `chk-${c}`;
      created(
        await api(`/namespaces/${ns}/events`, 'POST', {
          entity: { metadata: { name: entity } },
          check: { metadata: { name: check }, status: c % 3, output: 'x' },
        }),
        `${entity}/${check}`,
      );
      ids.push(`${ns}/${entity}/${check}`);
    }
  }
  await listUntil(`/namespaces/${ns}/events`, (l) => l.length === 30, '30 events listed');

  const tens = await walk(`/namespaces/${ns}/events`, 10);
  assert.equal(
    tens.map((p) => p.items.length),
    [10, 10, 10],
  );
  assert.ok(tens[0]!.next && tens[1]!.next, 'continue header on pages 1 and 2');
  assert.is(tens[2]!.next, null, 'no continue header on the last page');
  assert.equal(
    tens.flatMap((p) => p.items.map(eventId)),
    ids,
    'every event once, in order',
  );

  const twelves = await walk(`/namespaces/${ns}/events`, 12);
  assert.equal(
    twelves.map((p) => p.items.length),
    [12, 12, 6],
  );
  assert.equal(
    twelves.flatMap((p) => p.items.map(eventId)),
    ids,
  );

  const ofOne = await walk(`/namespaces/${ns}/events/ent-3`, 2);
  assert.equal(
    ofOne.map((p) => p.items.length),
    [2, 2, 1],
  );
  assert.equal(
    ofOne.flatMap((p) => p.items.map(eventId)),
    ids.filter((id) => id.includes('/ent-3/')),
  );

  const across = await walk('/events', 11);
  const acrossIds = across.flatMap((p) => p.items.map(eventId));
  assert.is(new Set(acrossIds).size, acrossIds.length, 'no duplicates in /events');
  for (const id of ids) assert.ok(acrossIds.includes(id), `${id} in the all-namespaces walk`);

  await listUntil(`/namespaces/${ns}/entities`, (l) => l.length === 6, '6 entities listed');
  const ents = await walk(`/namespaces/${ns}/entities`, 4);
  assert.equal(
    ents.map((p) => p.items.length),
    [4, 2],
  );
  assert.equal(
    ents.flatMap((p) => p.items.map(nameOf)),
    ['ent-0', 'ent-1', 'ent-2', 'ent-3', 'ent-4', 'ent-5'],
  );
  const entsAcross = await walk('/entities', 5);
  const entIds = entsAcross.flatMap((p) => p.items.map((e) => `${e.metadata.namespace}/${e.metadata.name}`));
  assert.is(new Set(entIds).size, entIds.length, 'no duplicates in /entities');
});

test('pagination: an invalid limit or continue token is 400', async () => {
  for (const path of [
    '/namespaces/default/checks',
    '/checks',
    '/namespaces/default/events',
    '/events',
    '/namespaces/default/entities',
    '/namespaces',
    '/users',
    '/clusterroles',
  ]) {
    for (const q of [
      'limit=abc',
      'limit=-1',
      'limit=1.5',
      'limit=10x',
      'continue=not%20a%20token',
      'continue=%25%25%25',
      'limit=5&continue=%3D%3D',
    ]) {
      isError(await api(`${path}?${q}`), 400, `${path}?${q}`);
    }
  }
  assert.is((await api('/namespaces/default/checks?limit=0')).status, 200, 'limit=0 means no limit');
});

// --- selectors ----------------------------------------------------------------------------------

const sel = (kind: 'labelSelector' | 'fieldSelector', expr: string) => `${kind}=${encodeURIComponent(expr)}`;

test('selectors on checks: ==, !=, in, notin, matches, &&, field selectors, several parameters', async () => {
  const ns = await newNamespace('sel-checks');
  const checks: Array<[string, Record<string, string> | undefined, number, string[]]> = [
    ['c-east', { region: 'us-east', team: 'a' }, 10, ['linux']],
    ['c-west', { region: 'us-west', team: 'b' }, 20, ['linux', 'web']],
    ['c-eu', { region: 'eu-central', team: 'a' }, 30, ['windows']],
    ['c-none', undefined, 40, []],
  ];
  for (const [name, labels, interval, subscriptions] of checks) {
    created(
      await api(`/namespaces/${ns}/checks`, 'POST', {
        command: 'true',
        interval,
        subscriptions,
        metadata: { name, ...(labels ? { labels } : {}) },
      }),
      name,
    );
  }
  const q = async (query: string) => {
    const r = await api<Body[]>(`/namespaces/${ns}/checks?${query}`);
    assert.is(r.status, 200, `${decodeURIComponent(query)}: ${JSON.stringify(r.body)}`);
    return r.body.map(nameOf).sort();
  };
  assert.equal(await q(sel('labelSelector', 'region == us-east')), ['c-east']);
  assert.equal(await q(sel('labelSelector', 'region != us-east')), ['c-eu', 'c-none', 'c-west']);
  assert.equal(await q(sel('labelSelector', 'region in (us-east,us-west)')), ['c-east', 'c-west']);
  assert.equal(
    await q(sel('labelSelector', 'region in (us-east, us-west)')),
    ['c-east', 'c-west'],
    'spaces in the list',
  );
  assert.equal(await q(sel('labelSelector', 'region notin (us-east,us-west)')), ['c-eu', 'c-none']);
  assert.equal(await q(sel('labelSelector', 'region matches us')), ['c-east', 'c-west']);
  assert.equal(await q(sel('labelSelector', 'region matches us && team == a')), ['c-east']);
  assert.equal(
    await q(`${sel('labelSelector', 'team == a')}&${sel('labelSelector', 'region != us-east')}`),
    ['c-eu'],
    'two labelSelector parameters are ANDed',
  );
  assert.equal(await q(sel('labelSelector', 'region == nowhere')), []);
  assert.equal(await q(sel('fieldSelector', 'check.interval == 20')), ['c-west']);
  assert.equal(await q(sel('fieldSelector', 'linux in check.subscriptions')), ['c-east', 'c-west']);
  assert.equal(await q(sel('fieldSelector', 'linux in check.subscriptions && web in check.subscriptions')), [
    'c-west',
  ]);
  assert.equal(await q(sel('fieldSelector', 'check.metadata.name == c-eu')), ['c-eu']);
  assert.equal(
    await q(`${sel('fieldSelector', 'linux in check.subscriptions')}&${sel('labelSelector', 'team == a')}`),
    ['c-east'],
    'label and field selectors together',
  );

  // Selectors and pagination together: pages of the selected items.
  const pages = await walk(`/namespaces/${ns}/checks?${sel('labelSelector', 'region != us-east')}`, 2);
  assert.equal(
    pages.map((p) => p.items.map(nameOf)),
    [['c-eu', 'c-none'], ['c-west']],
  );
  // The all-namespaces list takes selectors too.
  const across = await api<Body[]>(`/checks?${sel('labelSelector', 'region == us-west')}`);
  assert.ok(across.body.some((c) => c.metadata.name === 'c-west' && c.metadata.namespace === ns));
  assert.ok(across.body.every((c) => c.metadata.labels?.region === 'us-west'));
});

test('selectors on entities and events: entity_class, subscriptions, check.status, labels, &&', async () => {
  const ns = await newNamespace('sel-ev');
  created(
    await api(`/namespaces/${ns}/entities`, 'POST', {
      metadata: { name: 'e-proxy-linux', labels: { region: 'us-east' } },
      subscriptions: ['linux'],
    }),
    'e-proxy-linux',
  );
  created(
    await api(`/namespaces/${ns}/entities`, 'POST', {
      metadata: { name: 'e-agent-win', labels: { region: 'us-west' } },
      entity_class: 'agent',
      subscriptions: ['windows'],
    }),
    'e-agent-win',
  );
  created(
    await api(`/namespaces/${ns}/entities`, 'POST', {
      metadata: { name: 'e-proxy-web' },
      subscriptions: ['linux', 'web'],
    }),
    'e-proxy-web',
  );
  const post = async (entity: string, check: string, status: number, labels?: Record<string, string>) =>
    created(
      await api(`/namespaces/${ns}/events`, 'POST', {
        entity: { metadata: { name: entity } },
        check: { metadata: { name: check, ...(labels ? { labels } : {}) }, status, output: 'x' },
      }),
      `${entity}/${check}`,
    );
  await post('e-proxy-linux', 'disk', 2, { tier: 'gold' });
  await post('e-proxy-linux', 'cpu', 0);
  await post('e-agent-win', 'disk', 2);
  await post('e-proxy-web', 'disk', 1, { tier: 'gold' });
  await listUntil(`/namespaces/${ns}/events`, (l) => l.length === 4, '4 events listed');
  await listUntil(`/namespaces/${ns}/entities`, (l) => l.length === 3, '3 entities listed');

  const ents = async (query: string) => {
    const r = await api<Body[]>(`/namespaces/${ns}/entities?${query}`);
    assert.is(r.status, 200, `${decodeURIComponent(query)}: ${JSON.stringify(r.body)}`);
    return r.body.map(nameOf).sort();
  };
  assert.equal(await ents(sel('fieldSelector', 'entity.entity_class == proxy')), [
    'e-proxy-linux',
    'e-proxy-web',
  ]);
  assert.equal(await ents(sel('fieldSelector', 'entity.entity_class != proxy')), ['e-agent-win']);
  assert.equal(await ents(sel('fieldSelector', 'linux in entity.subscriptions')), [
    'e-proxy-linux',
    'e-proxy-web',
  ]);
  assert.equal(await ents(sel('fieldSelector', 'linux notin entity.subscriptions')), ['e-agent-win']);
  assert.equal(
    await ents(sel('fieldSelector', 'entity.entity_class == proxy && web in entity.subscriptions')),
    ['e-proxy-web'],
  );
  assert.equal(await ents(sel('fieldSelector', 'entity.entity_class in (agent,backend)')), ['e-agent-win']);
  assert.equal(await ents(sel('labelSelector', 'region matches us')), ['e-agent-win', 'e-proxy-linux']);
  assert.equal(
    await ents(
      `${sel('labelSelector', 'region == us-east')}&${sel('fieldSelector', 'linux in entity.subscriptions')}`,
    ),
    ['e-proxy-linux'],
  );
  const allEnts = await api<Body[]>(`/entities?${sel('fieldSelector', 'entity.entity_class == agent')}`);
  assert.ok(allEnts.body.some((e) => nameOf(e) === 'e-agent-win'));
  assert.ok(allEnts.body.every((e) => e.entity_class === 'agent'));

  const evs = async (query: string, path = `/namespaces/${ns}/events`) => {
    const r = await api<Body[]>(`${path}?${query}`);
    assert.is(r.status, 200, `${decodeURIComponent(query)}: ${JSON.stringify(r.body)}`);
    return r.body.map((e) => `${e.entity.metadata.name}/${e.check.metadata.name}`).sort();
  };
  assert.equal(await evs(sel('fieldSelector', 'check.status == 2')), [
    'e-agent-win/disk',
    'e-proxy-linux/disk',
  ]);
  assert.equal(
    await evs(sel('fieldSelector', 'event.check.status == 2')),
    ['e-agent-win/disk', 'e-proxy-linux/disk'],
    'with the leading resource word',
  );
  assert.equal(await evs(sel('fieldSelector', 'entity.entity_class == proxy')), [
    'e-proxy-linux/cpu',
    'e-proxy-linux/disk',
    'e-proxy-web/disk',
  ]);
  assert.equal(await evs(sel('fieldSelector', 'linux in entity.subscriptions')), [
    'e-proxy-linux/cpu',
    'e-proxy-linux/disk',
    'e-proxy-web/disk',
  ]);
  assert.equal(await evs(sel('fieldSelector', 'linux in entity.subscriptions && check.status == 2')), [
    'e-proxy-linux/disk',
  ]);
  assert.equal(await evs(sel('fieldSelector', 'check.status in (1,2) && entity.entity_class == proxy')), [
    'e-proxy-linux/disk',
    'e-proxy-web/disk',
  ]);
  assert.equal(
    await evs(sel('labelSelector', 'tier == gold')),
    ['e-proxy-linux/disk', 'e-proxy-web/disk'],
    'check labels',
  );
  assert.equal(await evs(sel('labelSelector', 'region == us-west')), ['e-agent-win/disk'], 'entity labels');
  assert.equal(
    await evs(`${sel('labelSelector', 'tier == gold')}&${sel('fieldSelector', 'check.status == 2')}`),
    ['e-proxy-linux/disk'],
  );
  assert.equal(
    await evs(sel('fieldSelector', 'check.status == 2'), `/namespaces/${ns}/events/e-proxy-linux`),
    ['e-proxy-linux/disk'],
    "one entity's events",
  );
  const across = await evs(
    sel('fieldSelector', `entity.metadata.namespace == ${ns} && check.status == 2`),
    '/events',
  );
  assert.equal(across, ['e-agent-win/disk', 'e-proxy-linux/disk'], 'the all-namespaces list');
});

test('selectors: a malformed selector is 400', async () => {
  const bad = [
    sel('labelSelector', 'region'),
    sel('labelSelector', 'region =='),
    sel('fieldSelector', 'check.status =='),
    sel('fieldSelector', '== 2'),
    sel('labelSelector', 'region == a && '),
    sel('fieldSelector', '&& check.status == 2'),
    sel('labelSelector', 'region = us-east'),
  ];
  for (const path of [
    '/namespaces/default/checks',
    '/checks',
    '/namespaces/default/entities',
    '/entities',
    '/namespaces/default/events',
    '/events',
    '/namespaces/default/silenced',
  ]) {
    for (const q of bad) isError(await api(`${path}?${q}`), 400, `${path}?${decodeURIComponent(q)}`);
  }
});

test.run();
