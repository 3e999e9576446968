// suite-timeout: 300
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN, adminAuth, startBackend, tempDir, waitFor, type Backend } from '../harness/index.ts';
import { coreApi, created } from '../harness/api.ts';
import { launchBrowser, openDashboard, seriousViolations, signIn, withShot } from '../harness/browser.ts';
import { startTcpCut } from '../harness/tcp-cut.ts';
import { backendAgents, type CheckAgent } from './agent-checks/backend.ts';
import { notice, row, rowsAre, shownRows, statusIs } from './dashboard-events/page.ts';

// The events pages in a real Chromium against a real backend and a real agent: the agent's keepalive
// on the list; a check the agent runs turning critical live; filters, sort and namespace from the
// URL; bulk silence, resolve, re-run and delete with their confirmations and results; the event
// detail page (output, history, occurrences, hooks, labels, live, copy as YAML); and 10,000 stored
// events, whose first paint is timed and printed (not asserted: the machines differ too much).

let backend: Backend;
let browser: Browser;
let page: Page | undefined;
let agent: CheckAgent;
const real = backendAgents(() => backend);
const api = coreApi(() => backend);
const files = tempDir('dash-events');
const statusFile = join(files, 'status');

// The page's globals inside page.evaluate: the tests' tsconfig has no DOM library.
declare const document: any, window: any, navigator: any, performance: any, MutationObserver: any;

interface Opened {
  context: BrowserContext;
  page: Page;
  errors: string[];
}

/** A signed-in page at `hash`. */
async function opened(hash: string): Promise<Opened> {
  const o = await openDashboard(browser, backend.apiUrl);
  page = o.page;
  await signIn(o.page, ADMIN.username, ADMIN.password);
  if (hash) await o.page.goto(`${backend.apiUrl}/${hash}`);
  return o;
}

/** Runs a test body on a signed-in page; a failure saves a screenshot; the context is closed after. */
async function onPage(name: string, hash: string, body: (o: Opened) => Promise<void>): Promise<void> {
  const o = await opened(hash);
  try {
    await withShot(
      () => page,
      name,
      () => body(o),
    );
  } finally {
    await o.context.close();
  }
}

async function post(entity: string, check: string, status: number, output: string, labels?: object) {
  created(
    await api('/namespaces/default/events', 'POST', {
      entity: {
        metadata: { name: entity, namespace: 'default', ...(labels ? { labels } : {}) },
        entity_class: 'proxy',
      },
      check: { metadata: { name: check, namespace: 'default' }, status, output, interval: 60 },
    }),
    `event ${entity}/${check}`,
  );
}

/** Waits until the dashboard API lists `entity/check` with `status` (the read model trails writes). */
const listed = (entity: string, check: string, status: number, timeoutMs = 10_000) =>
  waitFor(
    async () => {
      const r = await backend.get(
        `/api/dashboard/v1/namespaces/default/events?entity=${entity}&check=${check}&limit=10`,
        { headers: adminAuth },
      );
      return r.body.items?.some(
        (e: any) =>
          e.entity.metadata.name === entity && e.check.metadata.name === check && e.check.status === status,
      );
    },
    { timeoutMs, intervalMs: 100, what: `${entity}/${check} listed with status ${status}` },
  );

test.before(async () => {
  [backend, browser] = await Promise.all([
    startBackend({ name: 'dash-events', logLevel: 'warn' }),
    launchBrowser(),
  ]);
  agent = await real.agentOn();
  // Events the URL, bulk-action and detail tests work on: two entities in two regions.
  for (const [entity, check, status, region] of [
    ['url-a', 'cpu', 2, 'eu'],
    ['url-a', 'mem', 1, 'eu'],
    ['url-a', 'disk', 0, 'eu'],
    ['url-b', 'cpu', 2, 'us'],
    ['url-b', 'mem', 0, 'us'],
  ] as const)
    await post(entity, check, status, `${check} is ${status}`, { region });
  await listed('url-b', 'mem', 0);
});

test.after(async () => {
  await browser?.close();
  await real.stopAll();
  await backend?.stop();
});

test("signed in, the events page shows the agent's keepalive event", async () => {
  await onPage('keepalive', '', async ({ page: p, errors }) => {
    await row(p, agent.agent.name, 'keepalive').waitFor();
    await statusIs(p, agent.agent.name, 'keepalive', 'passing');
    assert.match(p.url(), /#\/events/);
    assert.is(await p.locator('header .live').getAttribute('aria-label'), 'Live updates: live');
    assert.equal(errors, []);
  });
});

test('a check run by the agent turns critical on the open page, without a reload', async () => {
  writeFileSync(statusFile, '0\n');
  await real.put('checks', 'dash-live', {
    command: `read s < ${statusFile}; echo "dash-live says $s"; exit $s`,
    interval: 1,
    publish: true,
    subscriptions: [agent.subscription],
    handlers: [],
  });
  // The row exists before the page opens: the page updates the rows it shows, and offers a
  // "Refresh" for events new to its list rather than inserting them under the reader.
  await listed(agent.agent.name, 'dash-live', 0, 20_000);
  await onPage('live critical', '#/events?check=dash-live', async ({ page: p, errors }) => {
    await statusIs(p, agent.agent.name, 'dash-live', 'passing', 20_000);
    await p.evaluate(() => ((window as any).__sameDocument = true));
    writeFileSync(statusFile, '2\n');
    await statusIs(p, agent.agent.name, 'dash-live', 'critical', 20_000);
    assert.match((await row(p, agent.agent.name, 'dash-live').textContent()) ?? '', /dash-live says 2/);
    assert.is(await p.evaluate(() => (window as any).__sameDocument), true, 'the page was not reloaded');
    // The counts follow (debounced): one critical among the events of this check.
    await p.locator('.count-critical', { hasText: '1 critical' }).waitFor();
    assert.equal(errors, []);
  });
  // Quiet again: the remaining tests do not need a check running every second.
  await real.put('checks', 'dash-live', {
    command: 'true',
    interval: 60,
    publish: false,
    subscriptions: [agent.subscription],
  });
});

test('a stream that drops resumes from its last event id: the missed change shows, without listing again', async () => {
  await post('resume-a', 'c', 0, 'before the cut');
  await listed('resume-a', 'c', 0);
  // The page talks to the backend through a relay whose connections the test cuts.
  const relay = await startTcpCut(backend.apiUrl);
  const o = await openDashboard(browser, relay.url);
  page = o.page;
  try {
    await withShot(
      () => page,
      'stream resume',
      async () => {
        const p = o.page;
        await signIn(p, ADMIN.username, ADMIN.password);
        await p.goto(`${relay.url}/#/events?entity=resume-`);
        await statusIs(p, 'resume-a', 'c', 'passing');
        const live = p.locator('header .live');
        const liveIs = (want: boolean, what: string) =>
          waitFor(async () => ((await live.getAttribute('aria-label')) === 'Live updates: live') === want, {
            timeoutMs: 10_000,
            what,
          });
        await liveIs(true, 'the stream live');
        const lists: string[] = [];
        const streams: (string | undefined)[] = [];
        p.on('request', (r) => {
          const u = new URL(r.url());
          if (u.pathname.endsWith('/events/stream')) streams.push(r.headers()['last-event-id']);
          // A list, not the counts (limit=0) the page asks for after changes.
          else if (u.pathname.startsWith('/api/dashboard/v1/') && u.searchParams.get('limit') !== '0')
            lists.push(r.url());
        });
        // An outage: the change happens while the page cannot reach the backend.
        relay.hold(true);
        assert.ok(relay.cutAll() > 0, 'the stream had a connection to cut');
        await liveIs(false, 'the stream seen down');
        await post('resume-a', 'c', 2, 'during the cut');
        await listed('resume-a', 'c', 2);
        relay.hold(false);
        await statusIs(p, 'resume-a', 'c', 'critical', 20_000);
        await liveIs(true, 'the stream live again');
        assert.ok(streams.length > 0, 'the page opened the stream again');
        const resumed = streams[0];
        assert.ok(
          resumed !== undefined && /^\d+$/.test(resumed),
          `Last-Event-ID sent: ${JSON.stringify(streams)}`,
        );
        assert.equal(lists, [], 'no list request: the missed change came from the replay');
        assert.equal(
          o.errors.filter((e) => !/Failed to fetch|network|ERR_/i.test(e)),
          [],
        );
      },
    );
  } finally {
    await o.context.close();
    await relay.close();
  }
});

test('filters, sort and namespace come from the URL and survive a reload; count links filter', async () => {
  await onPage(
    'url filters',
    '#/events?entity=url-&status=critical&sort=entity',
    async ({ page: p, errors }) => {
      await rowsAre(p, ['url-a/cpu', 'url-b/cpu'], 'status=critical&entity=url-');
      assert.is(await p.getByLabel('Status').inputValue(), 'critical');
      assert.is(await p.getByLabel('Entity', { exact: true }).inputValue(), 'url-');
      assert.is(await p.getByLabel('Sort by').inputValue(), 'entity');
      assert.is(await p.locator('.count-critical').getAttribute('aria-current'), 'true');
      await p.reload();
      await rowsAre(p, ['url-a/cpu', 'url-b/cpu'], 'after a reload');

      // Severity first: critical, then warning, then passing; entity order within a status.
      await p.goto(`${backend.apiUrl}/#/events?entity=url-a`);
      await rowsAre(p, ['url-a/cpu', 'url-a/mem', 'url-a/disk'], 'sorted by severity');

      // The selector language, as the API takes it.
      const q = new URLSearchParams({ fieldSelector: 'check.status == 2', labelSelector: 'region == eu' });
      await p.goto(`${backend.apiUrl}/#/events?${q}`);
      await rowsAre(p, ['url-a/cpu'], 'selectors');
      assert.is(await p.getByLabel('Field selector').inputValue(), 'check.status == 2');

      // A count is a link: "warning" shows the warnings of what the other filters keep.
      await p.goto(`${backend.apiUrl}/#/events?entity=url-&sort=entity`);
      await rowsAre(p, ['url-a/cpu', 'url-a/disk', 'url-a/mem', 'url-b/cpu', 'url-b/mem'], 'entity=url-');
      await p.locator('.count-warning').click();
      await rowsAre(p, ['url-a/mem'], 'the warning count link');
      assert.match(p.url(), /status=warning/);
      assert.match(p.url(), /entity=url-/);

      // All namespaces: the namespace column appears.
      await p.goto(`${backend.apiUrl}/#/events?namespace=*&entity=url-b`);
      await rowsAre(p, ['url-b/cpu', 'url-b/mem'], 'all namespaces');
      await p.getByRole('columnheader', { name: 'Namespace' }).waitFor();

      // A bad selector is answered in words, the filters stay usable.
      await p.goto(
        `${backend.apiUrl}/#/events?namespace=default&fieldSelector=${encodeURIComponent('check.status')}`,
      );
      await p
        .getByRole('alert')
        .filter({ hasText: /invalid fieldSelector/ })
        .waitFor();
      assert.ok(await p.getByLabel('Field selector').isVisible());
      assert.equal(errors, []);
    },
  );
});

test('bulk silence: two selected events silenced through the dialog show as silenced', async () => {
  await onPage(
    'bulk silence',
    '#/events?entity=url-&status=critical&sort=entity',
    async ({ page: p, errors }) => {
      await rowsAre(p, ['url-a/cpu', 'url-b/cpu'], 'the critical url- events');
      await p.getByRole('checkbox', { name: 'Select url-a/cpu' }).check();
      await p.getByRole('checkbox', { name: 'Select url-b/cpu' }).check();
      await p.getByText('2 selected').waitFor();
      await p.getByRole('button', { name: 'Silence…' }).click();
      const dialog = p.getByRole('dialog', { name: 'Silence 2 events' });
      await dialog.getByLabel('Reason').fill('disk swap tonight');
      await dialog.getByLabel('Expires after').selectOption({ label: '4 hours' });
      await dialog.getByLabel('Expire when the event resolves').check();
      await dialog.getByRole('button', { name: 'Silence' }).click();
      await notice(p, '2 silenced');
      for (const entity of ['url-a', 'url-b'])
        await row(p, entity, 'cpu').locator('.flag-silenced').waitFor();
      await p.locator('.count-silenced', { hasText: '2 silenced' }).waitFor();
      const entry = await api('/namespaces/default/silenced/entity:url-a:cpu');
      assert.is(entry.status, 200);
      assert.is(entry.body.reason, 'disk swap tonight');
      assert.is(entry.body.expire_on_resolve, true);
      assert.is(entry.body.creator, ADMIN.username);
      assert.ok(entry.body.expire > 14_000 && entry.body.expire <= 14_400, `expire ${entry.body.expire}`);
      // The filter by silencing, from its count link.
      await p.locator('.count-silenced').click();
      await rowsAre(p, ['url-a/cpu', 'url-b/cpu'], 'silenced=true');
      assert.equal(errors, []);
    },
  );
});

test('resolve: after confirming, the warning event is passing, with the resolution as output', async () => {
  await onPage('resolve', '#/events?entity=url-a&check=mem', async ({ page: p, errors }) => {
    await statusIs(p, 'url-a', 'mem', 'warning');
    await p.getByRole('checkbox', { name: 'Select url-a/mem' }).check();
    await p
      .getByRole('group', { name: 'Actions on the selected events' })
      .getByRole('button', { name: 'Resolve' })
      .click();
    const dialog = p.getByRole('dialog', { name: 'Resolve url-a/mem?' });
    await dialog.getByRole('button', { name: 'Resolve' }).click();
    await notice(p, '1 resolved');
    await statusIs(p, 'url-a', 'mem', 'passing');
    const e = await api('/namespaces/default/events/url-a/mem');
    assert.is(e.body.check.status, 0);
    assert.match(e.body.check.output, /^Resolved manually by admin/);
    assert.equal(
      e.body.check.history.map((h: any) => h.status),
      [1, 0],
    );
    assert.equal(errors, []);
  });
});

test("re-run: the check runs again now on the entity's agent", async () => {
  const first = await real.run(agent, 'dash-rerun', { command: 'echo "run at $(date +%s%N)"; exit 1' });
  await onPage('re-run', '#/events?check=dash-rerun', async ({ page: p, errors }) => {
    await statusIs(p, agent.agent.name, 'dash-rerun', 'warning');
    await p.getByRole('checkbox', { name: `Select ${agent.agent.name}/dash-rerun` }).check();
    // Not yet: the dialog can be cancelled, and nothing runs.
    await p.getByRole('button', { name: 'Re-run' }).click();
    await p.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    // A request issued in the same second as the run before is a duplicate to the agent, which drops
    // it (docs/compatibility.md#check-request-dedupe): the re-run comes a second later at least.
    while (Date.now() / 1000 < first.check.issued + 1) await new Promise((r) => setTimeout(r, 50));
    await p.getByRole('button', { name: 'Re-run' }).click();
    await p
      .getByRole('dialog', { name: 'Run the check again now?' })
      .getByRole('button', { name: 'Run now' })
      .click();
    const fromAgent = agent.agent.proc.lineCount;
    const fromBackend = backend.proc.lineCount;
    await notice(p, '1 re-run requested');
    let seen: any;
    const again = await waitFor(
      async () => {
        const r = await api(`/namespaces/default/events/${agent.agent.name}/dash-rerun`);
        seen = r.body.check;
        return r.body.check?.issued > first.check.issued ? r.body : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'a new result of dash-rerun' },
    ).catch((err: Error) => {
      // What each side said about the request, to tell a lost request from a refused one.
      const said = (lines: string[]) => lines.filter((l) => l.includes('dash-rerun')).join('\n');
      const brief = (c: any) =>
        JSON.stringify({ issued: c?.issued, executed: c?.executed, output: c?.output });
      throw new Error(
        `${err.message}; first ${brief(first.check)}, last seen ${brief(seen)}\nagent:\n${said(agent.agent.proc.lines().slice(fromAgent))}\nbackend:\n${said(backend.proc.lines().slice(fromBackend))}`,
      );
    });
    assert.is(again.check.history.length, 2);
    assert.is.not(again.check.output, first.check.output);
    // The new output shows on the open page (the stream's put).
    await row(p, agent.agent.name, 'dash-rerun').filter({ hasText: again.check.output.trim() }).waitFor();
    assert.equal(errors, []);
  });
});

test('delete: after confirming, the event is gone from the list and from the API', async () => {
  await onPage('delete', '#/events?entity=url-b', async ({ page: p, errors }) => {
    await rowsAre(p, ['url-b/cpu', 'url-b/mem'], 'url-b events');
    await p.getByRole('checkbox', { name: 'Select url-b/mem' }).check();
    await p.getByRole('button', { name: 'Delete' }).click();
    await p
      .getByRole('dialog', { name: 'Delete url-b/mem?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await notice(p, '1 deleted');
    await rowsAre(p, ['url-b/cpu'], 'after the delete');
    assert.is((await api('/namespaces/default/events/url-b/mem')).status, 404);
    assert.equal(errors, []);
  });
});

test('the detail page: output, history timeline, occurrences, hooks, labels; live; copy as YAML', async () => {
  await real.put('hooks', 'dash-hook', { command: 'echo "hook says hi"' });
  const ran = await real.run(agent, 'dash-detail', {
    command: 'echo "detail output line"; exit 2',
    check_hooks: [{ type: 'non-zero', hooks: ['dash-hook'] }],
    metadata: { labels: { tier: 'gold' } },
  });
  const o = await opened(`#/events?check=dash-detail`);
  const p = o.page;
  await o.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: backend.apiUrl });
  try {
    await withShot(
      () => page,
      'detail',
      async () => {
        await p.getByRole('link', { name: 'dash-detail', exact: true }).click();
        await p.getByRole('heading', { level: 1, name: `${agent.agent.name} / dash-detail` }).waitFor();
        assert.match(p.url(), new RegExp(`#/events/${agent.agent.name}/dash-detail\\?namespace=default`));
        assert.is((await p.getByLabel('Check output').textContent())?.trim(), 'detail output line');
        assert.is(await p.locator('.event-timeline li').count(), 1);
        const fact = (name: string) =>
          p
            .locator('dl.facts dt', { hasText: new RegExp(`^${name}$`) })
            .locator('xpath=following-sibling::dd[1]');
        assert.is((await fact('Occurrences').textContent())?.trim(), '1');
        assert.is((await fact('Occurrences watermark').textContent())?.trim(), '1');
        assert.match((await fact('Silenced by').textContent()) ?? '', /not silenced/);
        assert.is((await p.getByLabel('Output of hook dash-hook').textContent())?.trim(), 'hook says hi');
        await p.locator('dl.labels dt', { hasText: 'tier' }).waitFor();

        // Live: two more results arrive while the page is open.
        await real.execute(agent, 'dash-detail', {
          command: 'echo "detail output line"; exit 2',
          check_hooks: [{ type: 'non-zero', hooks: ['dash-hook'] }],
          metadata: { labels: { tier: 'gold' } },
        });
        await waitFor(async () => (await p.locator('.event-timeline li').count()) === 2 || undefined, {
          timeoutMs: 15_000,
          what: 'the second result in the timeline',
        });
        assert.is((await fact('Occurrences').textContent())?.trim(), '2');
        assert.is(await p.locator('.event-timeline li.status-critical').count(), 2);

        await p.getByRole('button', { name: 'Copy as YAML' }).click();
        await notice(p, 'Copied the event as YAML');
        const yaml = await p.evaluate(() => navigator.clipboard.readText());
        const fromYaml = parseYaml(yaml);
        const fromApi = (
          await backend.get(`/api/dashboard/v1/namespaces/default/events/${agent.agent.name}/dash-detail`, {
            headers: adminAuth,
          })
        ).body;
        assert.equal(fromYaml.check.history, fromApi.check.history);
        assert.equal(fromYaml.entity.metadata, fromApi.entity.metadata);
        assert.is(fromYaml.check.output, 'detail output line\n');
        assert.ok(ran.check.issued <= fromYaml.check.issued);
        await p.getByText('Show the event as text').click();
        await p.getByLabel('JSON', { exact: true }).check();
        const text = await p.getByLabel('The event as JSON').textContent();
        assert.equal(JSON.parse(text ?? '').check.history, fromApi.check.history);
        assert.equal(o.errors, []);
      },
    );
  } finally {
    await o.context.close();
  }
});

test('accessibility: no serious axe violation on the list, the silence dialog and the detail page; 390 px wide', async () => {
  await onPage('axe', '#/events?entity=url-a&sort=entity', async ({ page: p, errors }) => {
    const found: string[] = [];
    const scan = async (where: string) => found.push(...(await seriousViolations(p, where)));
    await row(p, 'url-a', 'disk').waitFor();
    await scan('list');
    await p.getByRole('checkbox', { name: 'Select url-a/disk' }).check();
    await p.getByRole('button', { name: 'Silence…' }).click();
    await p.getByRole('dialog').getByLabel('Reason').waitFor();
    await scan('silence dialog');
    await p.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await row(p, 'url-a', 'disk').getByRole('link', { name: 'disk', exact: true }).click();
    await p.getByRole('heading', { level: 1, name: 'url-a / disk' }).waitFor();
    await scan('detail');
    assert.equal(found, [], found.join('\n'));
    await p.setViewportSize({ width: 390, height: 844 });
    for (const hash of ['#/events/url-a/disk?namespace=default', '#/events?entity=url-a']) {
      await p.goto(`${backend.apiUrl}/${hash}`);
      await p.locator('main h1').waitFor();
      const { scroll, width } = await p.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        width: window.innerWidth,
      }));
      assert.ok(scroll <= width, `${hash}: ${scroll} px wide in a ${width} px viewport`);
    }
    assert.equal(errors, []);
  });
});

test('10,000 stored events: the page shows the total and the first rows at once (first paint printed)', async () => {
  created(await api('/namespaces', 'POST', { name: 'bulk' }), 'namespace bulk');
  const N = 10_000;
  const ENTITIES = 1_000;
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) {
      const entity = `bulk-${String(i % ENTITIES).padStart(4, '0')}`;
      const r = await api('/namespaces/bulk/events', 'POST', {
        entity: { metadata: { name: entity, namespace: 'bulk' }, entity_class: 'proxy' },
        check: {
          metadata: { name: `check-${Math.floor(i / ENTITIES)}`, namespace: 'bulk' },
          status: i % 3,
          output: `result ${i}`,
          interval: 60,
        },
      });
      assert.is(r.status, 201, `event ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  console.log(`[dashboard-events] stored ${N} events in ${Date.now() - started} ms`);
  await waitFor(
    async () =>
      (await backend.get('/api/dashboard/v1/namespaces/bulk/events?limit=0', { headers: adminAuth })).body
        .total === N,
    { timeoutMs: 20_000, what: `the read model to hold ${N} events` },
  );

  const o = await opened('');
  const p2 = await o.context.newPage();
  const errors: string[] = [];
  p2.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page = p2;
  // When the first row is in the document, by the page's clock (polling from here would add its delay).
  await p2.addInitScript(() => {
    new MutationObserver((_m: unknown, obs: { disconnect(): void }) => {
      if (!document.querySelector('.grid tbody tr:not(.spacer)')) return;
      window.__firstRowAt = performance.now();
      obs.disconnect();
    }).observe(document, { subtree: true, childList: true });
  });
  try {
    await withShot(
      () => page,
      '10k events',
      async () => {
        const t0 = Date.now();
        await p2.goto(`${backend.apiUrl}/#/events?namespace=bulk`);
        await p2.locator('.grid tbody tr:not(.spacer)').first().waitFor();
        const wall = Date.now() - t0;
        const paint = await p2.evaluate(() => ({
          fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
          rows: window.__firstRowAt ?? -1,
        }));
        console.log(
          `[dashboard-events] 10,000 events: first contentful paint ${Math.round(paint.fcp)} ms, ` +
            `first rows in the page ${Math.round(paint.rows)} ms after navigation ` +
            `(${wall} ms until the test saw them)`,
        );
        await p2.locator('.count-all', { hasText: '10000 all' }).waitFor();
        assert.match(
          (await p2.locator('.list-summary').textContent()) ?? '',
          /10000 events in namespace bulk/,
        );
        // Worst first, and only the rows in view are drawn (100 on the page).
        await p2.locator('.grid tbody tr:not(.spacer)').first().locator('.badge.status-critical').waitFor();
        const drawn = await p2.locator('.grid tbody tr:not(.spacer)').count();
        assert.ok(drawn > 5 && drawn < 100, `${drawn} rows drawn of the page's 100`);
        assert.is(
          await p2.getByRole('navigation', { name: 'Pages' }).locator('.pager-where').textContent(),
          'Page 1 of 100',
        );
        // Scrolling the table draws its last rows.
        await p2.locator('.grid-box').evaluate((el) => (el.scrollTop = el.scrollHeight));
        await p2.locator('.grid tbody tr[aria-rowindex="101"]').waitFor();
        // The next page is a URL of its own.
        const firstOfPage1 = (await shownRows(p2))[0];
        await p2.getByRole('link', { name: 'Next' }).click();
        await waitFor(() => /page=2/.test(p2.url()), { timeoutMs: 5_000, what: 'page=2 in the URL' });
        await p2.getByText('Page 2 of 100').waitFor();
        await waitFor(async () => (await shownRows(p2))[0] !== firstOfPage1 || undefined, {
          timeoutMs: 10_000,
          what: 'the rows of page 2',
        });
        assert.equal(errors, []);
      },
    );
  } finally {
    await o.context.close();
  }
});

test.run();
