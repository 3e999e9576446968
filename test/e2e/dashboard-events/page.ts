import type { Page } from 'playwright-core';
import { waitFor } from '../../harness/index.ts';

// The events table as the dashboard-events suite reads it in the page.

// The page's globals inside page.evaluate: the tests' tsconfig has no DOM library.
declare const document: any;

/** `entity/check` of the rows the table shows, top to bottom. */
export const shownRows = (p: Page) =>
  p.evaluate(() =>
    [...document.querySelectorAll('.grid tbody tr:not(.spacer)')].map((tr) =>
      [...tr.querySelectorAll('a')].map((a) => a.textContent?.trim()).join('/'),
    ),
  );

/** Waits until the table shows exactly `want` (in order). */
export async function rowsAre(p: Page, want: string[], what: string): Promise<void> {
  let last: string[] = [];
  await waitFor(
    async () => {
      last = await shownRows(p);
      return JSON.stringify(last) === JSON.stringify(want);
    },
    { timeoutMs: 10_000, intervalMs: 100, what: `${what}: rows ${JSON.stringify(want)}` },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; shown: ${JSON.stringify(last)}`);
  });
}

/** The row of `entity/check`. */
export const row = (p: Page, entity: string, check: string) =>
  p
    .locator('.grid tbody tr')
    .filter({ has: p.getByRole('link', { name: entity, exact: true }) })
    .filter({
      has: p.getByRole('link', { name: check, exact: true }),
    });

/** The status word of a row's badge, once it is `status`. */
export async function statusIs(p: Page, entity: string, check: string, status: string, timeoutMs = 10_000) {
  await row(p, entity, check).locator(`.badge.status-${status}`).waitFor({ timeout: timeoutMs });
}

export const notice = (p: Page, text: string | RegExp) => p.locator('.notice', { hasText: text }).waitFor();
