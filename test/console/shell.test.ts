import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/server/routes/console.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn } from '../helpers/browser.js';

const HOUR = 60 * 60 * 1000;
const clock = { now: Date.now() };

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ clock: () => clock.now }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the console shell', () => {
  it('asks a signed-out visitor to sign in, shows a wrong password\'s details, then leads to the page asked for', async () => {
    const { page, problems, response, close } = await openConsole(browser, t.url, '#/scanners');
    expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/sign-in?next=${encodeURIComponent('#/scanners')}`);
    await expectAccessible(page);
    await saveScreenshots(page, 'sign-in');

    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The e-mail address or password is wrong.');

    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Scanners', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/scanners');
    // The header names the user; the navigation has every page for an administrator.
    expect(await page.getByRole('banner').textContent()).toContain(ADMIN_EMAIL);
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Gateways', 'Scanners', 'Live', 'Events', 'Jobs', 'Admin']);
    expect(await page.getByRole('link', { name: 'Scanners' }).getAttribute('aria-current')).toBe('page');
    // The refused log-in's 401 is the only error the page reported.
    expect(problems).toEqual(['Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    await close();
  });

  it('keeps the session over a reload, and Sign out ends it', async () => {
    const { page, close } = await openConsole(browser, t.url, '#/events');
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.reload();
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.goto(`${t.url}/#/events`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await close();
  });

  it('returns to sign-in when the session expires, and back to the page it was on afterwards', async () => {
    const { page, close } = await openConsole(browser, t.url, '#/gateways');
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('table', { name: 'Gateways' }).waitFor();
    // The IdToken lives an hour: two hours on, the next call is refused with 401.
    clock.now += 2 * HOUR;
    try {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    } finally {
      // The other tests' tokens (t.admin's) were issued before.
      clock.now -= 2 * HOUR;
    }
    expect(new URL(page.url()).hash).toBe(`#/sign-in?next=${encodeURIComponent('#/gateways')}`);
    expect(await page.getByRole('status').filter({ hasText: 'session' }).textContent()).toBe('Your session has ended: sign in again to go on where you were.');
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('table', { name: 'Gateways' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/gateways');
    await close();
  });

  it('offers a USER_ROLE user no Admin page', async () => {
    const user = await t.createUser('USER_ROLE', 'viewer@example.com');
    expect(user.id).toBeTruthy();
    const { page, problems, close } = await openConsole(browser, t.url, '#/admin');
    await signIn(page, 'viewer@example.com', 'user-password-123');
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Gateways', 'Scanners', 'Live', 'Events', 'Jobs']);
    // Typed in by hand, the Admin route says why it shows nothing.
    await page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
    expect(await page.getByRole('main').textContent()).toContain('Your role does not allow this page (it needs the permission user.write)');
    expect(problems).toEqual([]);
    await close();
  });

  it('accepts an invitation: the password is checked locally (12 characters, twice), then the user is signed in', async () => {
    const created = await t.admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'New', last_name: 'Hire', role: 'USER_ROLE', email: 'hire@example.com' });
    const { invitation_token } = await t.admin.post<{ invitation_token: string }>(`/${CUSTOMER}/users/${created.id}/invitation`);
    const { page, close } = await openConsole(browser, t.url, '#/sign-in');
    await page.getByRole('link', { name: 'Accept the invitation' }).click();
    await page.getByRole('heading', { name: 'Accept invitation' }).waitFor();
    await expectAccessible(page);
    await saveScreenshots(page, 'accept-invitation');

    await page.getByLabel('Invitation token').fill(invitation_token);
    await page.getByLabel('New password').fill('too-short');
    await page.getByLabel('Confirm password').fill('too-short');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('The new password has 9 characters: it needs at least 12.');
    await page.getByLabel('New password').fill('a-long-password-1');
    await page.getByLabel('Confirm password').fill('a-long-password-2');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('The two passwords differ: type the same new password in both fields.');

    await page.getByLabel('Confirm password').fill('a-long-password-1');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByRole('heading', { name: 'Gateways', level: 1 }).waitFor();
    expect(await page.getByRole('banner').textContent()).toContain('hire@example.com');
    // The password works from now on; the token does not work twice.
    expect(await t.login('hire@example.com', 'a-long-password-1')).toBeTruthy();
    await close();
  });

  it('shows each page of the navigation with its heading, accessible, and without an error', async () => {
    const { page, problems, close } = await openConsole(browser, t.url, '#/gateways');
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    for (const name of ['Scanners', 'Live', 'Events', 'Jobs', 'Admin']) {
      await page.getByRole('navigation').getByRole('link', { name }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      await expectAccessible(page);
    }
    expect(problems).toEqual([]);
    await close();
  });
});
