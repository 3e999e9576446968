// Reading the dashboard's pages in the dashboard-config suite: going to a page, the rows of a
// table, waiting for a row, and axe's findings in the main content.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { waitFor } from '../../harness/index.ts';

/** Goes to a page of the dashboard (the hash only: the app routes it without a reload). */
export async function go(page: Page, hash: string) {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
}

/** The rows of the table labelled `label`, as the text of their cells. */
export async function rowsOf(page: Page, label: string): Promise<string[][]> {
  const table = page.getByRole('table', { name: label });
  await table.waitFor();
  return table
    .locator('tbody tr:not(.spacer)')
    .evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())),
    );
}

/**
 * Waits until the table labelled `label` has a row whose cell `col` (the name's) is `cell`, or none
 * with `gone`.
 */
export async function rowWith(page: Page, label: string, cell: string, gone = false, col = 0) {
  await waitFor(
    async () => {
      const has = (await rowsOf(page, label)).some((r) => r[col] === cell);
      return gone ? !has : has;
    },
    { timeoutMs: 15_000, intervalMs: 150, what: `${gone ? 'no' : 'a'} row ${cell} in "${label}"` },
  );
}

/** Accessibility problems axe finds in the page's main content (names of controls included). */
export async function axeViolations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).include('#main').analyze();
  return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
}
