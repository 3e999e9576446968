// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import {
  adminAuth,
  getJson,
  OIDC_CLIENT,
  OIDC_USERS,
  startBackend,
  startOidcProvider,
  type Backend,
  type OidcServer,
} from '../harness/index.ts';
import { launchBrowser, openDashboard, seriousViolations, withShot } from '../harness/browser.ts';

// The dashboard's OIDC sign-in in a real Chromium (docs/compatibility.md#oidc): the sign-in page's
// "Sign in with <provider>" button, the real provider's login form, and back to a signed-in
// dashboard; a refused callback shows its message on the sign-in page.

const CALLBACK = '/api/enterprise/authentication/v2/oidc/callback';
let backend: Backend;
let idp: OidcServer;
let browser: Browser;
let page: Page | undefined;

test.before(async () => {
  [backend, browser] = await Promise.all([startBackend({ name: 'dash-oidc' }), launchBrowser()]);
  idp = await startOidcProvider([`${backend.apiUrl}${CALLBACK}`]);
  const put = await getJson(`${backend.apiUrl}/api/enterprise/authentication/v2/authproviders/corp`, {
    method: 'PUT',
    headers: adminAuth,
    body: {
      type: 'oidc',
      api_version: 'authentication/v2',
      metadata: { name: 'corp' },
      spec: {
        client_id: OIDC_CLIENT.id,
        client_secret: OIDC_CLIENT.secret,
        server: idp.issuer,
        additional_scopes: ['profile', 'groups'],
        username_claim: 'preferred_username',
        groups_claim: 'groups',
        username_prefix: 'oidc',
        groups_prefix: 'oidc',
      },
    },
  });
  assert.is(put.status, 200, JSON.stringify(put.body));
});

test.after(async () => {
  await browser?.close();
  await Promise.allSettled([backend?.stop(), idp?.stop()]);
});

test('"Sign in with corp" goes through the provider\'s login form and back to a signed-in dashboard', () =>
  withShot(
    () => page,
    'oidc sign-in',
    async () => {
      const opened = await openDashboard(browser, backend.apiUrl);
      page = opened.page;
      const button = page.getByRole('link', { name: 'Sign in with corp' });
      await button.waitFor();
      assert.equal(await seriousViolations(page, 'sign-in with OIDC'), []);
      await button.click();
      await page.waitForURL((u) => u.origin === idp.issuer);
      await page.getByLabel('Login').fill('alice');
      await page.getByLabel('Password').fill(OIDC_USERS.alice);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.is(new URL(page.url()).origin, backend.apiUrl);
      assert.not.match(page.url(), /oidc_handoff/, 'the handoff key is gone from the address');
      const stored = (await page.evaluate("JSON.parse(localStorage.getItem('monitor.session'))")) as {
        username: string;
        tokens: { access_token: string };
      };
      assert.is(stored.username, 'oidc:alice');
      assert.type(stored.tokens.access_token, 'string');
      assert.equal(opened.errors, []);
      await opened.context.close();
    },
  ));

test('a refused callback lands on the sign-in page with the reason', () =>
  withShot(
    () => page,
    'oidc refused',
    async () => {
      const opened = await openDashboard(browser, backend.apiUrl);
      page = opened.page;
      await page.goto(`${backend.apiUrl}${CALLBACK}?code=x&state=forged`);
      await page.getByRole('alert').waitFor();
      assert.match(
        (await page.getByRole('alert').textContent()) ?? '',
        /unknown, used or expired OIDC login state/,
      );
      assert.ok(await page.getByRole('link', { name: 'Sign in with corp' }).isVisible());
      await opened.context.close();
    },
  ));

test.run();
