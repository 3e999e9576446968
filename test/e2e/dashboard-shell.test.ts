// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import type { Browser } from 'playwright-core';
import { ADMIN, startBackend, type Backend } from '../harness/index.ts';
import { launchBrowser, openDashboard, signIn, withShot } from '../harness/browser.ts';

// The dashboard's page and files as served by a real backend (headers, caching, CSP), and signing
// in and out in a real Chromium with no error on the page.

let backend: Backend;
let browser: Browser;

test.before(async () => {
  backend = await startBackend({ name: 'dash-shell' });
  browser = await launchBrowser();
});

test.after(async () => {
  await browser?.close();
  await backend?.stop();
});

test('/ is the dashboard page: HTML with a strict Content-Security-Policy and no-sniff', async () => {
  const res = await fetch(`${backend.apiUrl}/`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
  assert.not.match(csp, /unsafe-inline|unsafe-eval/);
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  const html = await res.text();
  assert.match(html, /<script type="importmap">/);
});

test('vendor modules are immutable under versioned URLs; the app files revalidate with an ETag (304)', async () => {
  const html = await (await fetch(`${backend.apiUrl}/`)).text();
  const map = JSON.parse(/<script type="importmap">(.*?)<\/script>/.exec(html)![1]!) as {
    imports: Record<string, string>;
  };
  const preact = map.imports['preact']!;
  assert.match(preact, /^\/static\/vendor\/preact@\d+\.\d+\.\d+\//);
  const v = await fetch(`${backend.apiUrl}${preact}`);
  assert.is(v.status, 200);
  assert.match(v.headers.get('cache-control') ?? '', /immutable/);
  assert.match(v.headers.get('content-type') ?? '', /^text\/javascript/);
  const app = await fetch(`${backend.apiUrl}/static/app/main.js`);
  assert.is(app.status, 200);
  assert.is(app.headers.get('cache-control'), 'no-cache');
  const etag = app.headers.get('etag')!;
  assert.ok(etag);
  const again = await fetch(`${backend.apiUrl}/static/app/main.js`, { headers: { 'If-None-Match': etag } });
  assert.is(again.status, 304);
  const missing = await fetch(`${backend.apiUrl}/static/app/nope.js`);
  assert.is(missing.status, 404);
  assert.equal(Object.keys((await missing.json()) as object).sort(), ['code', 'message']);
});

test('only the files of the dashboard are served: no way out of /static, no directory listing', async () => {
  for (const path of [
    '/static/..%2f..%2fpackage.json',
    '/static/%2e%2e/%2e%2e/package.json',
    '/static/app/',
    '/static/vendor/preact@0.0.0/dist/preact.module.js',
    '/static/tsconfig.json',
  ]) {
    const r = await fetch(`${backend.apiUrl}${path}`);
    assert.is(r.status, 404, path);
    await r.body?.cancel();
  }
});

test('signing in shows the events page; a reload keeps the session; signing out returns to sign-in', async () => {
  const { context, page, errors } = await openDashboard(browser, backend.apiUrl);
  try {
    await withShot(
      () => page,
      'sign in and out',
      async () => {
        await signIn(page, ADMIN.username, ADMIN.password);
        assert.match(page.url(), /#\/events/);
        await page.reload();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        assert.equal(errors, []);
      },
    );
  } finally {
    await context.close();
  }
});

test('a wrong password is answered on the sign-in form, in words', async () => {
  const { context, page } = await openDashboard(browser, backend.apiUrl);
  try {
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /bad credentials/);
  } finally {
    await context.close();
  }
});

test.run();
