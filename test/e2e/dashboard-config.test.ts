// suite-timeout: 300
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN, adminAuth, getJson, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { basic, bearer } from '../harness/api.ts';
import { legacyApi } from '../harness/legacy.ts';
import { launchBrowser, openDashboard, signIn, withShot } from '../harness/browser.ts';
import { axeViolations, go, rowWith, rowsOf } from './dashboard-config/page.ts';
import { RESOURCES } from './dashboard-config/resources.ts';

// The dashboard's configuration read views (handlers, filters, mutators, pipelines, assets) and its
// legacy views (clients, aggregates, stashes through /api/legacy), in a real Chromium against a real
// backend: what the API holds shows in each list and detail, filters live in the URL, deletions ask
// first and say what happened, a user without the role reads why, and a node whose legacy API is
// off says so.

let backend: Backend;
let off: Backend;
let browser: Browser;
/** The administrator's page, signed in once. */
let admin: { context: BrowserContext; page: Page; errors: string[] };
const legacy = legacyApi(() => backend);
const PW = 'P@ssw0rd!viewer';

const api = (method: string, path: string, body?: object) =>
  getJson(`${backend.apiUrl}/api/core/v2${path}`, { method, headers: adminAuth, body });
const must = async (method: string, path: string, body?: object) => {
  const r = await api(method, path, body);
  assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
};

const STASH = 'silence/web-01/disk';
const CLIENT = 'legacy-web-01';
const AGG = 'web-cluster';

test.before(async () => {
  [backend, off, browser] = await Promise.all([
    startBackend({ name: 'dash-config', logLevel: 'info' }),
    startBackend({ name: 'dash-config-off', legacyPort: 0, logLevel: 'info' }),
    launchBrowser(),
  ]);
  await waitFor(async () => (await api('GET', '/namespaces')).status === 200, {
    timeoutMs: 10_000,
    what: 'the admin API key to work',
  });
  await must('POST', '/namespaces', { name: 'ops' });
  for (const r of RESOURCES) await must('POST', `/namespaces/default/${r.plural}`, r.body);
  await must('POST', '/namespaces/ops/handlers', {
    metadata: { name: 'ops-pager', labels: { team: 'ops' } },
    type: 'tcp',
    socket: { host: 'pager.example.com', port: 4000 },
  });
  await must('POST', '/namespaces/default/handlers', {
    metadata: { name: 'cfg-all', labels: { team: 'web' } },
    type: 'set',
    handlers: ['cfg-slack'],
  });
  // A user who may read everything of every namespace but no stashes (seeded `view`, cluster-wide).
  await must('POST', '/users', { username: 'viewer', password: PW });
  await must('POST', '/clusterrolebindings', {
    metadata: { name: 'viewer-everywhere' },
    role_ref: { type: 'ClusterRole', name: 'view' },
    subjects: [{ type: 'User', name: 'viewer' }],
  });
  // The legacy side: a client (an entity), results of an aggregate, a stash.
  await must('POST', '/namespaces/default/entities', {
    metadata: { name: CLIENT, namespace: 'default' },
    entity_class: 'proxy',
    subscriptions: ['web', 'linux'],
  });
  admin = await openDashboard(browser, backend.apiUrl, '#/config');
  await signIn(admin.page, ADMIN.username, ADMIN.password);
  await admin.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: backend.apiUrl });
});

test.after(async () => {
  await browser?.close();
  await Promise.all([backend?.stop(), off?.stop()]);
});

test('each kind made through the API shows in its list with the fields of its kind, and its detail shows the whole definition', async () => {
  const { page } = admin;
  for (const r of RESOURCES) {
    await withShot(
      () => page,
      `list and detail of ${r.plural}`,
      async () => {
        await go(page, `#/config/${r.plural}?namespace=default`);
        const label = `${r.one}s in namespace default`;
        await rowWith(page, label, r.name);
        const row = (await rowsOf(page, label)).find((x) => x[0] === r.name)!;
        assert.ok(row.includes(r.shows), `${r.plural}: ${JSON.stringify(row)} shows ${r.shows}`);
        const labels = Object.entries(
          (r.body.metadata as { labels?: Record<string, string> }).labels ?? {},
        ).map(([k, v]) => `${k}=${v}`);
        assert.is(row[row.length - 1], labels.join('') || 'none', `${r.plural}: labels`);

        await page.getByRole('link', { name: `${r.one.toLowerCase()} ${r.name}` }).click();
        await page.getByRole('heading', { name: `${r.one} ${r.name}` }).waitFor();
        assert.match(page.url(), new RegExp(`#/config/${r.plural}\\?namespace=default&detail=${r.name}$`));
        const dt = page.locator('dl.cfg-facts dt', { hasText: r.fact[0] });
        assert.is((await dt.locator('xpath=following-sibling::dd[1]').textContent())?.trim(), r.fact[1]);
        const shown = JSON.parse((await page.getByLabel('Definition', { exact: true }).textContent()) ?? '');
        const stored = await api('GET', `/namespaces/default/${r.plural}/${r.name}`);
        assert.equal(shown, stored.body, `${r.plural}: the definition shown is the API's`);
      },
    );
  }
});

test("a detail's Copy button puts the definition on the clipboard and says so", async () => {
  const { page } = admin;
  await withShot(
    () => page,
    'copy',
    async () => {
      await go(page, '#/config/handlers?namespace=default&detail=cfg-slack');
      await page.getByRole('button', { name: 'Copy Definition' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied to the clipboard' }).waitFor();
      const copied = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()'));
      assert.is(copied.command, 'notify-slack --channel ops');
      assert.is(copied.metadata.name, 'cfg-slack');
    },
  );
});

test('the overview counts each kind in the namespace and links to its list', async () => {
  const { page } = admin;
  await withShot(
    () => page,
    'overview',
    async () => {
      await go(page, '#/config?namespace=default');
      const card = (title: string) =>
        page
          .locator('.cfg-cards li')
          .filter({ has: page.getByRole('heading', { name: title, exact: true }) });
      await card('Handlers').getByText('2 handlers').waitFor();
      for (const r of RESOURCES.slice(1))
        await card(`${r.one}s`).getByText(`1 ${r.one.toLowerCase()}`).waitFor();
      await card('Handlers').getByRole('link', { name: 'Handlers' }).click();
      await rowWith(page, 'Handlers in namespace default', 'cfg-all');
      assert.match(page.url(), /#\/config\/handlers\?namespace=default$/);
    },
  );
});

test('filters live in the URL: typing a name or a label selector narrows the list, and the URL alone opens the same view', async () => {
  const { page } = admin;
  await withShot(
    () => page,
    'filters',
    async () => {
      await go(page, '#/config/handlers?namespace=default');
      const label = 'Handlers in namespace default';
      await rowWith(page, label, 'cfg-all');
      await page.getByLabel('Name contains').fill('SLA');
      await rowWith(page, label, 'cfg-all', true);
      await waitFor(() => page.url().endsWith('name=SLA'), { timeoutMs: 5000, what: 'name=SLA in the URL' });
      assert.equal(
        (await rowsOf(page, label)).map((r) => r[0]),
        ['cfg-slack'],
      );
      // A label selector, `key=value` taken as `key == value`, filtered by the API.
      await go(page, '#/config/handlers?namespace=default&label=team%3Dweb');
      await rowWith(page, label, 'cfg-slack', true);
      assert.equal(
        (await rowsOf(page, label)).map((r) => r[0]),
        ['cfg-all'],
      );
      assert.is(await page.getByLabel('Labels').inputValue(), 'team=web');
      // A selector the API refuses is said in words.
      await go(page, '#/config/handlers?namespace=default&label=team%20%3D%3D');
      await page.getByRole('alert').filter({ hasText: 'invalid labelSelector' }).waitFor();
    },
  );
});

test("all namespaces: the list names each resource's namespace, and its detail opens from there", async () => {
  const { page } = admin;
  await withShot(
    () => page,
    'all namespaces',
    async () => {
      await go(page, '#/config/handlers?namespace=*');
      const label = 'Handlers in every namespace';
      await rowWith(page, label, 'ops-pager');
      const rows = await rowsOf(page, label);
      assert.equal(rows.map((r) => [r[0], r[1]]).sort(), [
        ['cfg-all', 'default'],
        ['cfg-slack', 'default'],
        ['ops-pager', 'ops'],
      ]);
      assert.ok(rows.find((r) => r[0] === 'ops-pager')!.includes('pager.example.com:4000'));
      await page.getByRole('link', { name: 'handler ops-pager' }).click();
      await page.getByRole('heading', { name: 'Handler ops-pager' }).waitFor();
      assert.match(page.url(), /namespace=\*&detail=ops-pager&detail_ns=ops$/);
      const shown = JSON.parse((await page.getByLabel('Definition', { exact: true }).textContent()) ?? '');
      assert.is(shown.metadata.namespace, 'ops');
    },
  );
});

test('keyboard only: Tab reaches the name filter and a row link, Enter opens the detail', async () => {
  const { page } = admin;
  await withShot(
    () => page,
    'keyboard',
    async () => {
      await go(page, '#/config/filters?namespace=default');
      await rowWith(page, 'Filters in namespace default', 'cfg-only-prod');
      await page.locator('#main').focus();
      const reached: string[] = [];
      for (let i = 0; i < 20; i++) {
        await page.keyboard.press('Tab');
        const name = await page.evaluate<string>(
          "document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent ?? ''",
        );
        reached.push(name.trim());
        if (name === 'filter cfg-only-prod') break;
      }
      assert.ok(reached.includes('filter cfg-only-prod'), `Tab reached: ${reached.join(' | ')}`);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Filter cfg-only-prod' }).waitFor();
    },
  );
});

test('a stash made through the legacy API shows on the stashes page, and is deleted from it after a confirmation', async () => {
  const r = await legacy('/stashes', 'POST', {
    path: STASH,
    content: { reason: 'disk swap', source: 'test' },
  });
  assert.is(r.status, 201);
  await waitFor(async () => (await legacy<any[]>('/stashes')).body.some((x) => x.path === STASH), {
    timeoutMs: 10_000,
    what: 'the stash listed by the legacy API',
  });
  const { page } = admin;
  await withShot(
    () => page,
    'stashes',
    async () => {
      await go(page, '#/legacy/stashes');
      await rowWith(page, 'Stashes', STASH, false, 1);
      const row = (await rowsOf(page, 'Stashes')).find((x) => x.includes(STASH))!;
      assert.ok(row.includes('{"reason":"disk swap","source":"test"}'), JSON.stringify(row));
      assert.ok(row.includes('never'), JSON.stringify(row));
      // Shown whole in a dialog.
      await page.getByRole('button', { name: `Show stash ${STASH}` }).click();
      const dialog = page.getByRole('dialog', { name: `Stash ${STASH}` });
      assert.equal(JSON.parse((await dialog.getByLabel('Content', { exact: true }).textContent()) ?? ''), {
        reason: 'disk swap',
        source: 'test',
      });
      await dialog.getByRole('button', { name: 'Close' }).click();
      // Closing gives focus back to the opener: only then is the keyboard's next focus its own.
      await dialog.waitFor({ state: 'hidden' });
      const opener = page.getByRole('button', { name: `Show stash ${STASH}` });
      await page.waitForFunction('(el) => document.activeElement === el', await opener.elementHandle(), {
        timeout: 5000,
      });
      // Escape (from the keyboard) keeps it; confirming deletes it and says so.
      await page.getByRole('button', { name: `Delete stash ${STASH}` }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog', { name: `Delete stash ${STASH}?` }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog', { name: `Delete stash ${STASH}?` }).waitFor({ state: 'hidden' });
      assert.is(
        (await legacy(`/stash/${encodeURIComponent(STASH)}`)).status,
        200,
        'still there after Escape',
      );
      await page.getByRole('button', { name: `Delete stash ${STASH}` }).click();
      await page
        .getByRole('dialog', { name: `Delete stash ${STASH}?` })
        .getByRole('button', { name: 'Delete stash' })
        .click();
      await page
        .getByRole('status')
        .filter({ hasText: `Stash ${STASH} deleted` })
        .waitFor();
      await rowWith(page, 'Stashes', STASH, true, 1);
      assert.is(
        (await legacy(`/stash/${encodeURIComponent(STASH)}`)).status,
        404,
        'gone from the legacy API',
      );
    },
  );
});

test('a client (an entity) shows on the clients page with its address, subscriptions and version, and is deleted from it', async () => {
  const { page } = admin;
  await withShot(
    () => page,
    'clients',
    async () => {
      await waitFor(async () => (await legacy<any[]>('/clients')).body.some((x) => x.name === CLIENT), {
        timeoutMs: 10_000,
        what: 'the client listed by the legacy API',
      });
      await go(page, '#/legacy/clients');
      await rowWith(page, 'Legacy clients', CLIENT);
      assert.is(
        await page.locator('#main p.muted').first().innerText(),
        'The legacy API shows namespace default (its --legacy-api-namespace), whatever namespace is picked above.',
      );
      const row = (await rowsOf(page, 'Legacy clients')).find((x) => x[0] === CLIENT)!;
      const view = (await legacy(`/clients/${CLIENT}`)).body;
      assert.ok(row.includes(view.address), `${JSON.stringify(row)} has the address ${view.address}`);
      assert.ok(row.includes(view.subscriptions.join(', ')), `${JSON.stringify(row)} has the subscriptions`);
      assert.ok(view.subscriptions.includes('web') && view.subscriptions.includes('linux'));
      assert.ok(row.includes(view.version), `${JSON.stringify(row)} has the version ${view.version}`);
      // The name filter, from the URL.
      await go(page, `#/legacy/clients?name=nobody`);
      await rowWith(page, 'Legacy clients', CLIENT, true);
      await go(page, `#/legacy/clients?name=web-01`);
      await rowWith(page, 'Legacy clients', CLIENT);

      await page.getByRole('button', { name: `Delete client ${CLIENT}` }).click();
      await page
        .getByRole('dialog', { name: `Delete client ${CLIENT}?` })
        .getByRole('button', { name: 'Delete client' })
        .click();
      await page
        .getByRole('status')
        .filter({ hasText: `Client ${CLIENT} is being deleted` })
        .waitFor();
      await rowWith(page, 'Legacy clients', CLIENT, true);
      assert.is((await legacy(`/clients/${CLIENT}`)).status, 404, 'gone from the legacy API');
    },
  );
});

test('aggregates show after results posted to the legacy /results: each severity counted, stale ones with max_age; delete', async () => {
  for (const [source, status] of [
    ['agg-a', 0],
    ['agg-b', 2],
    ['agg-c', 1],
  ] as const)
    assert.is(
      (await legacy('/results', 'POST', { name: 'http', output: 'x', status, source, aggregate: AGG }))
        .status,
      202,
    );
  // The legacy /results takes `executed` as now: an old result comes through the REST API.
  await must('POST', '/namespaces/default/events', {
    entity: { metadata: { name: 'agg-d', namespace: 'default' } },
    check: {
      metadata: { name: 'http', namespace: 'default' },
      status: 2,
      output: 'x',
      executed: Math.floor(Date.now() / 1000) - 3600,
      aggregate: AGG,
    },
  });
  await waitFor(async () => (await legacy(`/aggregates/${AGG}`)).body?.results?.total === 4, {
    timeoutMs: 10_000,
    what: 'the aggregate with its 4 results on the legacy API',
  });
  const { page } = admin;
  await withShot(
    () => page,
    'aggregates',
    async () => {
      await go(page, '#/legacy/aggregates');
      const label = 'Aggregates: results by severity';
      // Name, OK, Warning, Critical, Unknown, Stale, Total, Clients, Checks.
      await rowWith(page, label, AGG);
      assert.equal((await rowsOf(page, label)).find((r) => r[0] === AGG)!.slice(0, 9), [
        AGG,
        '1',
        '1',
        '2',
        '0',
        '0',
        '4',
        '4',
        '1',
      ]);
      await page.getByLabel('Stale after (s)').fill('600');
      await waitFor(async () => (await rowsOf(page, label)).find((r) => r[0] === AGG && r[5] === '1'), {
        timeoutMs: 10_000,
        what: 'one stale result with max_age=600',
      });
      assert.match(page.url(), /max_age=600/);
      assert.equal((await rowsOf(page, label)).find((r) => r[0] === AGG)!.slice(1, 7), [
        '1',
        '1',
        '1',
        '0',
        '1',
        '3',
      ]);

      await page.getByRole('button', { name: `Delete aggregate ${AGG}` }).click();
      await page
        .getByRole('dialog', { name: `Delete aggregate ${AGG}?` })
        .getByRole('button', { name: 'Delete aggregate' })
        .click();
      await page
        .getByRole('status')
        .filter({ hasText: `Aggregate ${AGG} deleted` })
        .waitFor();
      await rowWith(page, label, AGG, true);
      assert.is((await legacy(`/aggregates/${AGG}`)).status, 404);
    },
  );
});

test('a user without the role is refused (403) through /api/legacy and reads why in the page', async () => {
  const login = await getJson(`${backend.apiUrl}/auth`, { headers: basic('viewer', PW) });
  const refused = await getJson(`${backend.apiUrl}/api/legacy/stashes`, {
    headers: bearer(login.body.access_token),
  });
  assert.is(refused.status, 403);
  const viewer = await openDashboard(browser, backend.apiUrl, '#/legacy/stashes');
  try {
    await withShot(
      () => viewer.page,
      'refused',
      async () => {
        await signIn(viewer.page, 'viewer', PW);
        const alert = viewer.page.getByRole('alert');
        await alert.waitFor();
        assert.match((await alert.textContent()) ?? '', /user "viewer" may not list stashes \(HTTP 403\)/);
        // The clients are the viewer's to read (entities), but not to delete.
        await go(viewer.page, '#/legacy/clients');
        await viewer.page
          .getByRole('status')
          .filter({ hasText: /\d+ clients?/ })
          .first()
          .waitFor();
        assert.equal(viewer.errors, []);
      },
    );
  } finally {
    await viewer.context.close();
  }
});

test('on a node whose legacy API is off, the Legacy page says so', async () => {
  const s = await openDashboard(browser, off.apiUrl, '#/legacy');
  try {
    await withShot(
      () => s.page,
      'legacy off',
      async () => {
        await signIn(s.page, ADMIN.username, ADMIN.password);
        const alert = s.page.getByRole('alert');
        await alert.waitFor();
        assert.is(
          (await alert.innerText()).replace(/\s+/g, ' ').trim(),
          'The legacy API is off on this node. It was started with --legacy-api-port 0, so there are no legacy clients, aggregates or stashes to show.',
        );
        assert.is(await s.page.getByRole('navigation', { name: 'Legacy views' }).count(), 0);
      },
    );
  } finally {
    await s.context.close();
  }
});

test('at 390 px every page reads without sideways scrolling, and axe finds no accessibility problem in any', async () => {
  // Data for the legacy pages again (the tests above deleted theirs).
  await legacy('/stashes', 'POST', { path: 'narrow/check', content: { a: 1 }, expire: 3600 });
  await must('POST', '/namespaces/default/entities', {
    metadata: { name: 'narrow-client', namespace: 'default' },
    entity_class: 'proxy',
  });
  await legacy('/results', 'POST', {
    name: 'http',
    output: 'x',
    status: 1,
    source: 'narrow-client',
    aggregate: 'narrow',
  });
  const narrow = await openDashboard(browser, backend.apiUrl, '#/config', {
    viewport: { width: 390, height: 844 },
  });
  try {
    await signIn(narrow.page, ADMIN.username, ADMIN.password);
    const problems: string[] = [];
    for (const [hash, ready] of [
      ['#/config?namespace=default', '2 handlers'],
      ['#/config/handlers?namespace=default', 'cfg-slack'],
      ['#/config/pipelines?namespace=*', 'cfg-pipe'],
      ['#/config/assets?namespace=default&detail=cfg-tool', 'Definition'],
      ['#/config/pipelines?namespace=default&detail=cfg-pipe', 'Workflow to-slack'],
      ['#/legacy/clients', 'narrow-client'],
      ['#/legacy/aggregates', 'narrow'],
      ['#/legacy/stashes', 'narrow/check'],
    ] as const) {
      await withShot(
        () => narrow.page,
        `390 px ${hash}`,
        async () => {
          await go(narrow.page, hash);
          await narrow.page.getByText(ready, { exact: true }).first().waitFor();
          const width = await narrow.page.evaluate<number>('document.documentElement.scrollWidth');
          if (width > 390) problems.push(`${hash}: the page is ${width} px wide`);
          for (const v of await axeViolations(narrow.page)) problems.push(`${hash}: ${v}`);
        },
      );
    }
    assert.equal(problems, []);
    assert.equal(narrow.errors, []);
    assert.equal(admin.errors, []);
  } finally {
    await narrow.context.close();
  }
});

test.run();
