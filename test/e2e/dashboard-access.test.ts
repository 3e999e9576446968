// suite-timeout: 300
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import {
  ADMIN,
  startAgent,
  startBackend,
  startSlapd,
  waitFor,
  type AgentProc,
  type Backend,
  type Slapd,
} from '../harness/index.ts';
import { coreApi } from '../harness/api.ts';
import { launchBrowser, openDashboard, seriousViolations, signIn, withShot } from '../harness/browser.ts';

// The dashboard for every user and device: an accessibility scan of each page (light and dark) with
// no serious violation, phone width without sideways scrolling, the keyboard (skip link, Ctrl+K),
// a directory (LDAP) user signing in, tokens refreshed before they expire, a 401 sending the page
// back to sign-in, and no script error or CSP refusal on any page. It also takes the README's
// screenshot of the events page (written into docs/ with MONITOR_README_SCREENSHOT=1).

let backend: Backend;
let agent: AgentProc;
let slapd: Slapd;
let browser: Browser;
let page: Page | undefined;
const api = coreApi(() => backend);
const USER = { username: 'dash-viewer', password: 'viewer-pass-123' };

const PAGES = ['#/events', '#/entities', '#/checks', '#/silences', '#/config', '#/legacy'];

test.before(async () => {
  [backend, slapd, browser] = await Promise.all([
    // Short access tokens: the refresh test watches them renewed.
    startBackend({ name: 'dash-access', logLevel: 'warn', extraArgs: ['--access-token-expiry', '6'] }),
    startSlapd(),
    launchBrowser(),
  ]);
  agent = await startAgent({
    name: 'dash-access-agent',
    backendUrls: backend.agentUrl,
    keepaliveInterval: 2,
  });
  // Something on the events page: a critical and a warning event besides the agent's keepalive.
  for (const [check, status, output] of [
    ['disk-root', 2, 'CRITICAL - / is 97% full'],
    ['load', 1, 'WARNING - load average 6.1'],
    ['ntp', 0, 'OK - offset 0.002 s'],
  ] as const) {
    const r = await api('/namespaces/default/events', 'POST', {
      entity: { metadata: { name: 'web-01', namespace: 'default' }, entity_class: 'proxy' },
      check: { metadata: { name: check, namespace: 'default' }, status, output, interval: 60 },
    });
    assert.ok(r.status < 300, `event ${check}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const u = await api('/users', 'POST', {
    username: USER.username,
    password: USER.password,
    groups: ['viewers'],
  });
  assert.ok(u.status < 300, `user: ${u.status} ${JSON.stringify(u.body)}`);
  const crb = await api('/clusterrolebindings', 'POST', {
    metadata: { name: 'dash-viewers' },
    role_ref: { type: 'ClusterRole', name: 'view' },
    subjects: [{ type: 'Group', name: 'viewers' }],
  });
  assert.ok(crb.status < 300, `binding: ${crb.status} ${JSON.stringify(crb.body)}`);
});

test.after(async () => {
  await browser?.close();
  await Promise.allSettled([agent?.stop(), slapd?.stop()]);
  await backend?.stop();
});

/** A signed-in page of a fresh context; closed by the caller. */
async function signedIn(
  o: Parameters<typeof openDashboard>[3] = {},
  who: { username: string; password: string } = ADMIN,
) {
  const opened = await openDashboard(browser, backend.apiUrl, '', o);
  page = opened.page;
  await signIn(opened.page, who.username, who.password);
  return opened;
}

for (const colorScheme of ['light', 'dark'] as const) {
  test(`axe finds no serious or critical violation on the sign-in page and every page (${colorScheme})`, async () => {
    const { context, page: p } = await openDashboard(browser, backend.apiUrl, '', { colorScheme });
    page = p;
    try {
      await withShot(
        () => page,
        `axe ${colorScheme}`,
        async () => {
          const report: string[] = [];
          const scan = async (where: string) => report.push(...(await seriousViolations(p, where)));
          await p.getByRole('button', { name: 'Sign in' }).waitFor();
          await scan('sign-in');
          await signIn(p, ADMIN.username, ADMIN.password);
          for (const hash of PAGES) {
            await p.goto(`${backend.apiUrl}/${hash}`);
            await p.locator('main h1').first().waitFor();
            await p.waitForLoadState('networkidle').catch(() => {});
            await scan(hash);
          }
          assert.equal(report, [], report.join('\n'));
        },
      );
    } finally {
      await context.close();
    }
  });
}

test('at phone width (390 px) no page scrolls sideways and the navigation stays reachable', async () => {
  const { context, page: p, errors } = await signedIn({ viewport: { width: 390, height: 844 } });
  try {
    await withShot(
      () => page,
      'phone width',
      async () => {
        for (const hash of PAGES) {
          await p.goto(`${backend.apiUrl}/${hash}`);
          await p.locator('main h1').first().waitFor();
          // Expressions as text: they run in the page; this file is type-checked without DOM types.
          const { scroll, width } = (await p.evaluate(
            '({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })',
          )) as { scroll: number; width: number };
          assert.ok(scroll <= width, `${hash}: the page is ${scroll} px wide in a ${width} px viewport`);
          assert.ok(
            await p
              .getByRole('navigation', { name: 'Main' })
              .getByRole('link', { name: 'Checks' })
              .isVisible(),
          );
        }
        assert.equal(errors, []);
      },
    );
  } finally {
    await context.close();
  }
});

test('keyboard: the first Tab reaches "Skip to content", and Ctrl+K focuses the namespace switcher', async () => {
  const { context, page: p } = await signedIn();
  try {
    await withShot(
      () => page,
      'keyboard',
      async () => {
        await p.keyboard.press('Tab');
        assert.is(await p.evaluate('document.activeElement?.textContent?.trim()'), 'Skip to content');
        await p.keyboard.press('Enter');
        assert.is(await p.evaluate('document.activeElement?.id'), 'main');
        await p.keyboard.press('Control+k');
        assert.is(await p.evaluate("document.activeElement?.getAttribute('title')"), 'Namespace (Ctrl+K)');
      },
    );
  } finally {
    await context.close();
  }
});

test('a directory (LDAP) user signs in through the same form and sees the events', async () => {
  const provider = {
    type: 'ldap',
    api_version: 'authentication/v2',
    metadata: { name: 'corp' },
    spec: {
      servers: [
        {
          host: '127.0.0.1',
          port: slapd.port,
          security: 'insecure',
          binding: { user_dn: slapd.bindDn, password: slapd.bindPassword },
          user_search: { base_dn: slapd.peopleDn },
          group_search: { base_dn: slapd.groupsDn },
        },
      ],
      groups_prefix: 'ldap',
      username_prefix: 'ldap',
    },
  };
  const put = await backend.get('/api/enterprise/authentication/v2/authproviders/corp', {
    method: 'PUT',
    body: provider,
  });
  assert.ok(put.status < 300, `provider: ${put.status} ${JSON.stringify(put.body)}`);
  const crb = await api('/clusterrolebindings', 'POST', {
    metadata: { name: 'dash-ldap-ops' },
    role_ref: { type: 'ClusterRole', name: 'view' },
    subjects: [{ type: 'Group', name: 'ldap:ops' }],
  });
  assert.ok(crb.status < 300, `binding: ${crb.status} ${JSON.stringify(crb.body)}`);
  const { context, page: p, errors } = await openDashboard(browser, backend.apiUrl);
  page = p;
  try {
    await withShot(
      () => page,
      'ldap sign-in',
      async () => {
        await waitFor(
          async () => {
            await p.getByLabel('Username').fill('alice');
            await p.getByLabel('Password').fill('alice-secret');
            await p.getByRole('button', { name: 'Sign in' }).click();
            return p
              .getByRole('button', { name: 'Sign out' })
              .waitFor({ timeout: 3000 })
              .then(
                () => true,
                () => undefined,
              );
          },
          { timeoutMs: 20_000, what: 'alice to sign in through the directory' },
        );
        await p.getByRole('cell', { name: 'disk-root' }).first().waitFor();
        assert.match((await p.locator('.user').textContent()) ?? '', /alice/);
        assert.equal(errors, []);
      },
    );
  } finally {
    await context.close();
  }
});

test('tokens are refreshed before they expire: after three lifetimes the page still reads the API', async () => {
  const { context, page: p, errors } = await signedIn();
  try {
    await withShot(
      () => page,
      'refresh',
      async () => {
        const token = () =>
          p.evaluate("JSON.parse(localStorage.getItem('monitor.session')).tokens.access_token");
        const first = await token();
        await p.waitForTimeout(18_000);
        assert.is.not(await token(), first, 'the access token was renewed');
        const statuses: number[] = [];
        p.on('response', (r) => {
          if (new URL(r.url()).pathname.startsWith('/api/')) statuses.push(r.status());
        });
        // A reload reads the namespaces again, with whatever token the page holds now.
        await p.reload();
        await p.getByRole('button', { name: 'Sign out' }).waitFor();
        await waitFor(async () => statuses.length > 0 || undefined, {
          timeoutMs: 10_000,
          what: 'an API call',
        });
        assert.ok(
          statuses.every((s) => s === 200),
          `API answers after the wait: ${statuses.join(', ')}`,
        );
        assert.equal(errors, []);
      },
    );
  } finally {
    await context.close();
  }
});

test('a 401 (the user was disabled) sends the page back to sign-in', async () => {
  const { context, page: p } = await signedIn({}, USER);
  try {
    await withShot(
      () => page,
      '401',
      async () => {
        const del = await api(`/users/${USER.username}`, 'DELETE');
        assert.ok(del.status < 300, `disable: ${del.status}`);
        // The next API call answers 401 (a reload reads the namespaces again; the events page may have
        // made one already): the page shows the sign-in form.
        await p.reload();
        await p.getByRole('button', { name: 'Sign in' }).waitFor();
      },
    );
  } finally {
    await context.close();
    await api(`/users/${USER.username}/reinstate`, 'PUT');
  }
});

test('the events page, as the README shows it (written into docs/ with MONITOR_README_SCREENSHOT=1)', async () => {
  const { context, page: p, errors } = await signedIn({ viewport: { width: 1280, height: 720 } });
  try {
    await withShot(
      () => page,
      'readme',
      async () => {
        await p.getByRole('cell', { name: 'disk-root' }).first().waitFor();
        await p.getByRole('cell', { name: 'keepalive' }).first().waitFor();
        const dir =
          process.env.MONITOR_README_SCREENSHOT === '1'
            ? path.resolve(import.meta.dirname, '../../docs/images')
            : path.join(backend.stateDir, 'screenshots');
        mkdirSync(dir, { recursive: true });
        await p.screenshot({ path: path.join(dir, 'dashboard-events.png') });
        assert.equal(errors, []);
      },
    );
  } finally {
    await context.close();
  }
});

test.run();
