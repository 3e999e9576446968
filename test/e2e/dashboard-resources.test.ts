// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN, startAgent, startBackend, waitFor, type AgentProc, type Backend } from '../harness/index.ts';
import { coreApi, type Body } from '../harness/api.ts';
import { launchBrowser, openDashboard, seriousViolations, signIn, withShot } from '../harness/browser.ts';

// The entities, checks and silences pages (issue 19) in a real Chromium, against a real backend and
// a real agent: the agent's entity with its keepalive state, filters in the URL and server paging,
// the entity's facts and live events, silences created, edited and expired, a check run now and
// executed by the agent, an entity deleted after a confirmation, and the API's refusals in words.

const AGENT = 'dash-res-agent';
const CHECK = 'dash-hello';

let backend: Backend;
let agent: AgentProc;
let browser: Browser;
let page: Page | undefined;
const api = coreApi(() => backend);

async function ok(r: Promise<{ status: number; body: unknown }>, what: string): Promise<void> {
  const res = await r;
  assert.ok(res.status < 300, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
}

const proxy = (name: string, labels: Record<string, string>, subscriptions: string[]) =>
  ok(
    api('/namespaces/default/entities', 'POST', {
      metadata: { name, namespace: 'default', labels },
      entity_class: 'proxy',
      subscriptions,
    }),
    `entity ${name}`,
  );

test.before(async () => {
  [backend, browser] = await Promise.all([
    startBackend({ name: 'dash-res', logLevel: 'warn' }),
    launchBrowser(),
  ]);
  agent = await startAgent({
    name: AGENT,
    backendUrls: backend.agentUrl,
    subscriptions: ['dash-web', 'linux'],
    keepaliveInterval: 2,
    warning: 30,
    logLevel: 'info',
    // A label the entity's default redact list hides (api_key): the dashboard must show it hidden too.
    extraArgs: ['--labels', 'region=eu,api_key=s3cr3t-label'],
  });
  await Promise.all([
    proxy('dash-db-01', { region: 'eu', tier: 'db' }, ['db']),
    proxy('dash-db-02', { region: 'us', tier: 'db' }, ['db']),
    proxy('dash-doomed', {}, []),
    ok(
      api(`/namespaces/default/checks/${CHECK}`, 'PUT', {
        metadata: { name: CHECK, namespace: 'default' },
        command: 'echo dashboard says hello',
        interval: 60,
        subscriptions: ['dash-web'],
        publish: false,
        handlers: [],
      }),
      'check',
    ),
  ]);
  await waitFor(
    async () => {
      const r = await api(`/namespaces/default/events/${AGENT}/keepalive`);
      return r.status === 200 && r.body.check?.status === 0 ? true : undefined;
    },
    { timeoutMs: 30_000, what: "the agent's passing keepalive" },
  );
});

test.after(async () => {
  await browser?.close();
  await agent?.stop();
  await backend?.stop();
});

/** A fresh signed-in page at `hash`; the caller closes the context. */
async function open(
  hash: string,
  o: Parameters<typeof openDashboard>[3] = {},
): Promise<{ context: BrowserContext; p: Page; errors: string[] }> {
  const opened = await openDashboard(browser, backend.apiUrl, hash, o);
  page = opened.page;
  await signIn(opened.page, ADMIN.username, ADMIN.password);
  return { context: opened.context, p: opened.page, errors: opened.errors };
}

/** Runs a test body on a signed-in page; a failure saves a screenshot; no page error is allowed. */
async function onPage(
  hash: string,
  name: string,
  body: (p: Page) => Promise<void>,
  o: Parameters<typeof openDashboard>[3] = {},
): Promise<void> {
  const { context, p, errors } = await open(hash, o);
  try {
    await withShot(
      () => page,
      name,
      async () => {
        await body(p);
        assert.equal(errors, [], 'no script error or CSP refusal on the page');
      },
    );
  } finally {
    await context.close();
  }
}

/** The table row holding a link named `name`. */
const rowOf = (p: Page, name: string) =>
  p.getByRole('row').filter({ has: p.getByRole('link', { name, exact: true }) });

/** Waits for a notice (the polite status region) to say `text`. */
const notice = (p: Page, text: RegExp) => p.locator('.notice').filter({ hasText: text }).first().waitFor();

const silenced = (name: string) => api<Body>(`/namespaces/default/silenced/${encodeURIComponent(name)}`);

test("the agent's entity is listed with its class, subscriptions, last seen and passing keepalive", async () => {
  await onPage('#/entities', 'entities list', async (p) => {
    const row = rowOf(p, AGENT);
    await row.getByText('passing').waitFor();
    const text = (await row.textContent()) ?? '';
    assert.match(text, /agent/);
    assert.match(text, /dash-web, linux/);
    assert.not.match(text, /entity:dash-res-agent/, 'the automatic entity:<name> subscription is left out');
    assert.match(text, /\d+ s ago/);
    // A proxy entity has no keepalive: said in words.
    await rowOf(p, 'dash-db-01').getByText('none', { exact: true }).first().waitFor();
  });
});

test('the entity list filters by URL (class, subscription, labels, name), pages from the server and lists every namespace', async () => {
  await onPage('#/entities?class=proxy', 'entities filters', async (p) => {
    const link = (name: string) => p.getByRole('link', { name, exact: true });
    await link('dash-db-01').waitFor();
    assert.is(await link(AGENT).count(), 0, 'class=proxy leaves the agent out');
    assert.is(await p.getByLabel('Class').inputValue(), 'proxy');

    await p.goto(`${backend.apiUrl}/#/entities?sub=dash-web`);
    await link(AGENT).waitFor();
    assert.is(await link('dash-db-01').count(), 0, 'sub=dash-web leaves the proxies out');

    await p.goto(`${backend.apiUrl}/#/entities?labels=${encodeURIComponent('tier == db && region == eu')}`);
    await link('dash-db-01').waitFor();
    assert.is(await link('dash-db-02').count(), 0);
    assert.is(await link(AGENT).count(), 0);

    // One entity a page: the second comes from the server with "Load more".
    await p.goto(`${backend.apiUrl}/#/entities?name=dash-db&limit=1`);
    // dash-db-01 was on the page before: the new list is there once the filter and "Load more" are.
    await waitFor(async () => (await p.getByLabel('Name contains').inputValue()) === 'dash-db' || undefined, {
      timeoutMs: 10_000,
      what: 'the name filter from the URL',
    });
    await p.getByRole('button', { name: 'Load more' }).waitFor();
    await link('dash-db-01').waitFor();
    assert.is(await link('dash-db-02').count(), 0);
    await p.getByRole('button', { name: 'Load more' }).click();
    await link('dash-db-02').waitFor();

    // Typing a filter writes it into the URL.
    await p.getByLabel('Name contains').fill('doomed');
    await waitFor(async () => /[?&]name=doomed/.test(p.url()) || undefined, {
      timeoutMs: 5000,
      what: 'name=doomed in the URL',
    });
    await link('dash-doomed').waitFor();
    assert.is(await link('dash-db-01').count(), 0);

    await p.goto(`${backend.apiUrl}/#/entities?namespace=*&name=dash-res`);
    await p.getByRole('columnheader', { name: 'Namespace' }).waitFor();
    assert.match((await rowOf(p, AGENT).textContent()) ?? '', /default/);
  });
});

test('the entity detail shows its system facts (redacted as the API sends them), labels and its events, live', async () => {
  const entity = (await api<Body>(`/namespaces/default/entities/${AGENT}`)).body;
  await onPage(`#/entities/${AGENT}?namespace=default`, 'entity detail', async (p) => {
    const system = p.locator('section.card', { has: p.getByRole('heading', { name: 'System' }) });
    await system.getByText(entity.system.hostname, { exact: true }).first().waitFor();
    await system.getByText(entity.system.arch, { exact: true }).first().waitFor();
    const labels = p.getByRole('list', { name: 'Labels' });
    assert.match((await labels.textContent()) ?? '', /api_key=REDACTED/);
    assert.match((await labels.textContent()) ?? '', /region=eu/);
    assert.not.match((await p.content()) ?? '', /s3cr3t-label/);
    assert.match((await p.getByRole('list', { name: 'Subscriptions' }).textContent()) ?? '', /dash-web/);

    const keepalive = p.getByRole('link', { name: 'keepalive', exact: true });
    await keepalive.waitFor();
    assert.is(await keepalive.getAttribute('href'), `#/events/${AGENT}/keepalive?namespace=default`);

    // The stream is up; an event stored now appears without a reload.
    await p.getByRole('status', { name: 'Live updates: live' }).waitFor();
    await ok(
      api('/namespaces/default/events', 'POST', {
        entity: { metadata: { name: AGENT, namespace: 'default' }, entity_class: 'agent' },
        check: {
          metadata: { name: 'dash-live', namespace: 'default' },
          status: 1,
          output: 'WARNING - live',
          interval: 60,
        },
      }),
      'event',
    );
    await rowOf(p, 'dash-live').getByText('warning', { exact: true }).waitFor();
  });
});

test('silencing an entity from its page creates entity:<name> with the reason and expiry given', async () => {
  const name = `entity:${AGENT}:*`;
  await onPage(`#/entities/${AGENT}?namespace=default`, 'silence entity', async (p) => {
    await p.getByRole('button', { name: 'Silence', exact: true }).click();
    const dialog = p.getByRole('dialog', { name: `Silence entity ${AGENT}` });
    assert.is(await dialog.getByLabel('Subscription').inputValue(), `entity:${AGENT}`);
    await dialog.getByLabel('Reason').fill('kernel upgrade');
    await dialog.getByLabel(/^Expire after/).fill('1h');
    await dialog.getByRole('button', { name: 'Create silence' }).click();
    await notice(p, new RegExp(`Created silence entity:${AGENT}:\\*`));
    const s = await silenced(name);
    assert.is(s.status, 200);
    assert.is(s.body.subscription, `entity:${AGENT}`);
    assert.is(s.body.check, undefined);
    assert.is(s.body.reason, 'kernel upgrade');
    assert.is(s.body.expire, 3600);
    assert.is(s.body.creator, ADMIN.username);
    // The page lists it among the entity's silences.
    await p.getByRole('link', { name, exact: true }).waitFor();
  });
  await ok(api(`/namespaces/default/silenced/${encodeURIComponent(name)}`, 'DELETE'), 'cleanup');
});

test('the silences page creates a silence and lists it, edits it, and expires it after a confirmation', async () => {
  const name = `dash-web:${CHECK}`;
  await onPage('#/silences', 'silences', async (p) => {
    await p.getByRole('button', { name: 'New silence' }).click();
    const create = p.getByRole('dialog', { name: 'New silence' });
    await create.getByLabel('Subscription').fill('dash-web');
    await create.getByLabel('Check', { exact: true }).fill(CHECK);
    await create.getByLabel('Reason').fill('maintenance window');
    await create.getByLabel(/^Expire after/).fill('30m');
    await create.getByLabel('Expire when the check resolves').check();
    await create.getByRole('button', { name: 'Create silence' }).click();
    await notice(p, new RegExp(`Created silence ${name}`));
    const row = p.getByRole('row').filter({ has: p.getByRole('button', { name: `Edit silence ${name}` }) });
    await row.getByText('maintenance window').waitFor();
    const first = (await silenced(name)).body;
    assert.is(first.expire, 1800);
    assert.is(first.expire_on_resolve, true);
    assert.is(first.reason, 'maintenance window');

    await row.getByRole('button', { name: `Edit silence ${name}` }).click();
    const edit = p.getByRole('dialog', { name: `Edit silence ${name}` });
    assert.ok(await edit.getByLabel('Subscription').isDisabled(), 'the subscription names the silence');
    assert.is(await edit.getByLabel('Reason').inputValue(), 'maintenance window');
    assert.is(await edit.getByLabel(/^Expire after/).inputValue(), '30m');
    await edit.getByLabel('Reason').fill('longer maintenance');
    await edit.getByLabel(/^Expire after/).fill('2h');
    await edit.getByRole('button', { name: 'Save silence' }).click();
    await notice(p, new RegExp(`Saved silence ${name}`));
    await row.getByText('longer maintenance').waitFor();
    const edited = (await silenced(name)).body;
    assert.is(edited.reason, 'longer maintenance');
    assert.is(edited.expire, 7200);
    assert.is(edited.begin, first.begin, 'the start is kept to the second');
    assert.is(edited.creator, ADMIN.username);

    await row.getByRole('button', { name: `Expire silence ${name}` }).click();
    await p
      .getByRole('dialog', { name: `Expire silence ${name}` })
      .getByRole('button', { name: 'Expire now' })
      .click();
    await notice(p, new RegExp(`Silence ${name} expired`));
    await row.waitFor({ state: 'detached' });
    assert.is((await silenced(name)).status, 404);
  });
});

test("the API's refusal is shown in words: a silence with neither subscription nor check", async () => {
  const refused = await api('/namespaces/default/silenced', 'POST', {
    metadata: { namespace: 'default' },
    reason: '',
    expire_on_resolve: false,
  });
  assert.is(refused.status, 400);
  await onPage('#/silences', 'silence refused', async (p) => {
    await p.getByRole('button', { name: 'New silence' }).click();
    const dialog = p.getByRole('dialog', { name: 'New silence' });
    // A duration the page cannot read is said before anything is sent.
    await dialog.getByLabel(/^Expire after/).fill('soon');
    await dialog.getByRole('button', { name: 'Create silence' }).click();
    assert.match((await dialog.getByRole('alert').textContent()) ?? '', /"soon" is not a duration/);
    await dialog.getByLabel(/^Expire after/).fill('');
    await dialog.getByRole('button', { name: 'Create silence' }).click();
    const alert = dialog.getByRole('alert').filter({ hasText: 'was not created' });
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.ok(text.includes(refused.body.message), `"${text}" holds the API's "${refused.body.message}"`);
    assert.match(text, /HTTP 400/);
    assert.ok(await dialog.isVisible(), 'the dialog stays open to be corrected');
  });
});

test('running a check now from the checks page: the agent runs it and its event is stored', async () => {
  await onPage('#/checks', 'run check', async (p) => {
    const row = rowOf(p, CHECK);
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    assert.match(text, /echo dashboard says hello/);
    assert.match(text, /every 1m/);
    assert.match(text, /dash-web/);
    await row.getByRole('button', { name: `Run ${CHECK} now` }).click();
    const dialog = p.getByRole('dialog', { name: `Run check ${CHECK} now` });
    await dialog.getByLabel('Reason').fill('from the dashboard');
    await dialog.getByRole('button', { name: 'Run now' }).click();
    await notice(p, new RegExp(`Check ${CHECK} requested at .* for dash-web`));
    const event = await waitFor(
      async () => {
        const r = await api<Body>(`/namespaces/default/events/${AGENT}/${CHECK}`);
        return r.status === 200 ? r.body : undefined;
      },
      { timeoutMs: 30_000, what: `the agent's event of ${CHECK}` },
    );
    assert.match(event.check.output, /dashboard says hello/);

    // The check's own page shows its definition and the event.
    await p.getByRole('link', { name: CHECK, exact: true }).click();
    await p.getByRole('heading', { name: 'Definition' }).waitFor();
    await p.getByText('echo dashboard says hello').first().waitFor();
    const link = p.getByRole('link', { name: AGENT, exact: true });
    await link.waitFor();
    assert.is(await link.getAttribute('href'), `#/events/${AGENT}/${CHECK}?namespace=default`);
  });
});

test('silencing a check from the checks page creates a silence with that check on every entity', async () => {
  const name = `*:${CHECK}`;
  await onPage('#/checks', 'silence check', async (p) => {
    await rowOf(p, CHECK)
      .getByRole('button', { name: `Silence ${CHECK}` })
      .click();
    const dialog = p.getByRole('dialog', { name: `Silence check ${CHECK}` });
    assert.is(await dialog.getByLabel('Check', { exact: true }).inputValue(), CHECK);
    await dialog.getByLabel('Reason').fill('noisy');
    await dialog.getByRole('button', { name: 'Create silence' }).click();
    await notice(p, /Created silence \*:dash-hello/);
    const s = await silenced(name);
    assert.is(s.status, 200);
    assert.is(s.body.check, CHECK);
    assert.is(s.body.subscription, undefined);
    assert.is(s.body.reason, 'noisy');
  });
  await ok(api(`/namespaces/default/silenced/${encodeURIComponent(name)}`, 'DELETE'), 'cleanup');
});

test('deleting an entity asks first: cancel keeps it, confirming deletes it and says so', async () => {
  await onPage('#/entities/dash-doomed?namespace=default', 'delete entity', async (p) => {
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    await p.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = p.getByRole('dialog', { name: 'Delete entity dash-doomed' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.is((await api('/namespaces/default/entities/dash-doomed')).status, 200, 'cancel deletes nothing');

    await p.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('button', { name: 'Delete entity' }).click();
    await notice(p, /Entity dash-doomed deleted/);
    await waitFor(async () => /#\/entities\?/.test(p.url()) || undefined, {
      timeoutMs: 5000,
      what: 'back on the entities list',
    });
    assert.is((await api('/namespaces/default/entities/dash-doomed')).status, 404);
  });
});

for (const colorScheme of ['light', 'dark'] as const) {
  test(`axe finds no serious violation on the entity and check pages and in the silence and run dialogs (${colorScheme})`, async () => {
    await onPage(
      `#/entities/${AGENT}?namespace=default`,
      `axe ${colorScheme}`,
      async (p) => {
        const report: string[] = [];
        await p.getByRole('heading', { name: 'System' }).waitFor();
        await p.getByRole('link', { name: 'keepalive', exact: true }).waitFor();
        report.push(...(await seriousViolations(p, 'entity')));
        await p.getByRole('button', { name: 'Silence', exact: true }).click();
        await p.getByRole('dialog', { name: `Silence entity ${AGENT}` }).waitFor();
        report.push(...(await seriousViolations(p, 'silence dialog')));
        await p.keyboard.press('Escape');
        await p.goto(`${backend.apiUrl}/#/checks/${CHECK}?namespace=default`);
        await p.getByRole('heading', { name: 'Definition' }).waitFor();
        report.push(...(await seriousViolations(p, 'check')));
        await p.getByRole('button', { name: 'Run now' }).click();
        await p.getByRole('dialog', { name: `Run check ${CHECK} now` }).waitFor();
        report.push(...(await seriousViolations(p, 'run dialog')));
        assert.equal(report, [], report.join('\n'));
      },
      { colorScheme },
    );
  });
}

test('at phone width (390 px) the detail pages and dialogs do not scroll sideways', async () => {
  await onPage(
    `#/entities/${AGENT}?namespace=default`,
    'phone width',
    async (p) => {
      const fits = async (where: string) => {
        // The suites are typed without the DOM's library: the element is read through the locator.
        const { scroll, width } = await p.locator('html').evaluate((el) => ({
          scroll: el.scrollWidth as number,
          width: el.ownerDocument.defaultView.innerWidth as number,
        }));
        assert.ok(scroll <= width, `${where}: the page is ${scroll} px wide in a ${width} px viewport`);
      };
      await p.getByRole('heading', { name: 'System' }).waitFor();
      await fits('entity');
      await p.goto(`${backend.apiUrl}/#/checks/${CHECK}?namespace=default`);
      await p.getByRole('heading', { name: 'Definition' }).waitFor();
      await fits('check');
      await p.goto(`${backend.apiUrl}/#/silences`);
      await p.getByRole('button', { name: 'New silence' }).click();
      const dialog = p.getByRole('dialog', { name: 'New silence' });
      await dialog.waitFor();
      await fits('silence dialog');
      const box = await dialog.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the dialog fits: ${JSON.stringify(box)}`);
    },
    { viewport: { width: 390, height: 844 } },
  );
});

test('keyboard: a new silence is made without the mouse, and Escape closes the dialog', async () => {
  await onPage('#/silences', 'keyboard', async (p) => {
    const button = p.getByRole('button', { name: 'New silence' });
    await button.focus();
    await p.keyboard.press('Enter');
    const dialog = p.getByRole('dialog', { name: 'New silence' });
    await dialog.waitFor();
    // The dialog takes the focus: its first field.
    assert.ok(
      await dialog
        .getByRole('textbox', { name: 'Subscription' })
        .evaluate((el) => el === el.ownerDocument.activeElement),
      'the subscription field has the focus',
    );
    await p.keyboard.type('dash-kbd');
    await p.keyboard.press('Tab');
    await p.keyboard.type(CHECK);
    await p.keyboard.press('Enter');
    await notice(p, new RegExp(`Created silence dash-kbd:${CHECK}`));
    assert.is((await silenced(`dash-kbd:${CHECK}`)).status, 200);
    await button.focus();
    await p.keyboard.press('Enter');
    await dialog.waitFor();
    await p.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });
  await ok(
    api(`/namespaces/default/silenced/${encodeURIComponent(`dash-kbd:${CHECK}`)}`, 'DELETE'),
    'cleanup',
  );
});

test.run();
