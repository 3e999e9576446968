/**
 * A real Chromium for the dashboard's tests (docs/architecture.md#dashboard), driven by
 * playwright-core: the OS's browser (Debian package `chromium`, installed by `make test`), never a
 * downloaded one. `MONITOR_CHROMIUM` names another binary.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

function chromiumPath(): string {
  const given = process.env.MONITOR_CHROMIUM;
  if (given) return given;
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found)
    throw new Error(`no Chromium found (looked for ${CANDIDATES.join(', ')}; make test installs it)`);
  return found;
}

/** A headless Chromium; close it in the suite's `after` hook. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    // Containers run tests as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
    timeout: 30_000,
  });
}

interface PageOptions {
  /** Viewport; default a laptop's 1280×800. */
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
}

/** A fresh context (own storage, so its own session) and page at the dashboard of `apiUrl`. */
export async function openDashboard(
  browser: Browser,
  apiUrl: string,
  hash = '',
  o: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: o.viewport ?? { width: 1280, height: 800 },
    colorScheme: o.colorScheme ?? 'light',
  });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  // Uncaught errors and CSP refusals of the page, which a test asserts are none.
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text()))
      errors.push(`console: ${m.text()}`);
  });
  await page.goto(`${apiUrl}/${hash}`);
  return { context, page, errors };
}

/** Signs in through the form and waits for the signed-in frame. */
export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

let shotsDir: string | undefined;

/**
 * Runs a test body; on failure saves a screenshot of `page` before the failure goes on. The folder
 * (under the OS's temp folder, path printed) is not one the harness removes: it is there to be read.
 */
export async function withShot<T>(
  page: () => Page | undefined,
  name: string,
  body: () => Promise<T>,
): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const p = page();
    if (p && !p.isClosed()) {
      shotsDir ??= mkdtempSync(path.join(os.tmpdir(), 'monitor-dashboard-shots-'));
      const file = path.join(shotsDir, `${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.png`);
      await p.screenshot({ path: file, fullPage: true }).catch(() => {});
      process.stderr.write(`[browser] screenshot of the failure: ${file}\n`);
    }
    throw err;
  }
}

/** The serious and critical WCAG 2.1 AA violations axe finds on the page as it is now, one line each. */
export async function seriousViolations(page: Page, where: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${where}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
}
