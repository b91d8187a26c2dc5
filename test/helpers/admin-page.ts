import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, openConsole, signIn, type ConsolePage } from './browser.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type TestServer } from './server.js';

/** A server, a chromium, and the administrator signed in on the console's Admin page. */
export interface AdminConsole {
  t: TestServer;
  browser: Browser;
  admin: ConsolePage;
  close(): Promise<void>;
}

/** Starts a server and a browser, and signs the administrator in at `#/admin`. */
export async function startAdminConsole(): Promise<AdminConsole> {
  const [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  const admin = await openConsole(browser, t.url, '#/admin');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
  return {
    t,
    browser,
    admin,
    async close() {
      await browser.close();
      await t.close();
    },
  };
}

/** The row of a table whose row header is `name` (a user's e-mail, a key's name, a role). */
export const row = (scope: Page | Locator, name: string) => scope.getByRole('row').filter({ has: scope.getByRole('rowheader', { name, exact: true }) });

/** Opens a section of the console's Admin page by its link in the page's own navigation. */
export async function openAdminSection(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: title, exact: true }).click();
  await page.getByRole('heading', { name: title, level: 2 }).waitFor();
}

/** The line a console error shows for an answer the test provoked (`400 (Bad Request)`). */
export const refused = (status: string) => `Failed to load resource: the server responded with a status of ${status}`;
