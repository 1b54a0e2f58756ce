/**
 * What the web view's browser tests look for on the page (Chromium via playwright-core): an
 * object's row in the objects table, waited for until it shows or goes.
 */
import type { Page } from 'playwright-core';

/** A safety net for page waits: far above what a loaded machine needs; never decides a pass. */
export const GIVE_UP_MS = 120_000;

export const row = (name: string): string => `#objects tbody tr:has(td.name:text-is("${name}"))`;

export async function rowVisible(page: Page, name: string): Promise<void> {
  await page.waitForSelector(row(name), { state: 'visible', timeout: GIVE_UP_MS });
}

export async function rowGone(page: Page, name: string): Promise<void> {
  await page.waitForSelector(row(name), { state: 'detached', timeout: GIVE_UP_MS });
}
