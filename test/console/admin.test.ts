import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;

/** The row of a table whose row header is `name` (the user's e-mail, the key's name). */
const row = (scope: Page | Locator, name: string) => scope.getByRole('row').filter({ has: scope.getByRole('rowheader', { name, exact: true }) });

/** Opens a section of the Admin page by its link in the page's own navigation. */
async function openSection(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: title, exact: true }).click();
  await page.getByRole('heading', { name: title, level: 2 }).waitFor();
}

interface ApiUser {
  id: string;
  email: string;
  roles: string[];
}

async function userByEmail(email: string): Promise<ApiUser | undefined> {
  const { items } = await t.admin.get<{ items: ApiUser[] }>(`/${CUSTOMER}/users?limit=500`);
  return items.find((u) => u.email === email);
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  admin = await openConsole(browser, t.url, '#/admin');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the Admin page: users', () => {
  it('opens on Users, with a link per section the administrator may see', async () => {
    const { page } = admin;
    await row(page, ADMIN_EMAIL).waitFor();
    expect(new URL(page.url()).hash).toBe('#/admin/users');
    expect(await page.title()).toBe('Users · Admin · scanhub');
    expect(await page.getByRole('navigation', { name: 'Admin' }).getByRole('link').allTextContents()).toEqual(['Users', 'Roles', 'API keys', 'Audit log', 'Retention']);
    expect(await page.getByRole('link', { name: 'Users', exact: true }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByRole('table', { name: 'Users' }).getByRole('columnheader').allTextContents()).toEqual(['Email', 'Name', 'Roles', 'Created', 'Actions']);
    const cells = await row(page, ADMIN_EMAIL).getByRole('cell').allTextContents();
    expect([cells[1], cells[3]]).toEqual(['ADMIN_ROLE', 'RolesInviteReset passwordDelete']);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-users');
  });

  it('invites a new user, who accepts the invitation in another browser and gets no Admin page', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog', { name: 'New user' });
    await dialog.getByLabel('First name').fill('Kim');
    await dialog.getByLabel('Last name').fill('Lee');
    await dialog.getByLabel('Email').fill(ADMIN_EMAIL);
    expect(await dialog.getByLabel('Role').inputValue()).toBe('USER_ROLE');
    await dialog.getByRole('button', { name: 'Create and invite' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe(`A user with the e-mail address "${ADMIN_EMAIL}" already exists.`);
    await dialog.getByLabel('Email').fill('kim@example.com');
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-new-user');
    await dialog.getByRole('button', { name: 'Create and invite' }).click();

    const invitation = page.getByRole('dialog', { name: 'Invitation for kim@example.com' });
    const token = await invitation.getByLabel('Invitation token').inputValue();
    expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(await invitation.getByLabel('Invitation page').inputValue()).toBe(`${t.url}/#/accept-invitation`);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-invitation');
    await invitation.getByRole('button', { name: 'Done' }).click();
    await invitation.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'Created' }).textContent()).toBe('Created user kim@example.com.');
    expect((await row(page, 'kim@example.com').getByRole('cell').allTextContents()).slice(0, 2)).toEqual(['Kim Lee', 'USER_ROLE']);
    // Shown once: the token is nowhere on the page once the dialog is closed.
    expect(await page.content()).not.toContain(token);

    const kim = await openConsole(browser, t.url, '#/accept-invitation');
    await kim.page.getByLabel('Invitation token').fill(token);
    await kim.page.getByLabel('New password').fill('kims-password-123');
    await kim.page.getByLabel('Confirm password').fill('kims-password-123');
    await kim.page.getByRole('button', { name: 'Accept invitation' }).click();
    await kim.page.getByRole('heading', { name: 'Gateways', level: 1 }).waitFor();
    expect(await kim.page.getByRole('banner').textContent()).toContain('kim@example.com');
    expect(await kim.page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Gateways', 'Scanners', 'Live', 'Events', 'Jobs']);
    await kim.page.goto(`${t.url}/#/admin/users`);
    await kim.page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
    expect(await kim.page.getByRole('main').textContent()).toBe('AdminYour role does not allow this page (it needs the permission user.write); ask an administrator.');
    expect(kim.problems).toEqual([]);
    await kim.close();
  });

  it('changes a user\'s roles', async () => {
    const { page } = admin;
    await row(page, 'kim@example.com').getByRole('button', { name: 'Roles' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roles of kim@example.com' });
    expect(await dialog.getByRole('checkbox', { name: 'USER_ROLE' }).isChecked()).toBe(true);
    expect(await dialog.getByRole('checkbox', { name: 'ADMIN_ROLE' }).isChecked()).toBe(false);
    await dialog.getByRole('checkbox', { name: 'USER_ROLE' }).uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe('Body field "roles" must NOT have fewer than 1 items.');
    await dialog.getByRole('checkbox', { name: 'USER_ROLE' }).check();
    await dialog.getByRole('checkbox', { name: 'ADMIN_ROLE' }).check();
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-user-roles');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'now has' }).textContent()).toBe('kim@example.com now has the roles USER_ROLE, ADMIN_ROLE.');
    await expect.poll(async () => (await row(page, 'kim@example.com').getByRole('cell').allTextContents())[1]).toBe('USER_ROLEADMIN_ROLE');
    expect((await userByEmail('kim@example.com'))!.roles).toEqual(['USER_ROLE', 'ADMIN_ROLE']);
  });

  it('resets a password, showing the token once; an invitation for a user with a password shows the API\'s details', async () => {
    const { page } = admin;
    const kim = (await userByEmail('kim@example.com'))!;
    await row(page, 'kim@example.com').getByRole('button', { name: 'Invite' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe(`User "${kim.id}" has a password already: an invitation is for a user without one; an administrator resets it with POST /${CUSTOMER}/users/${kim.id}/password-reset.`);

    await row(page, 'kim@example.com').getByRole('button', { name: 'Reset password' }).click();
    const dialog = page.getByRole('dialog', { name: 'Password reset for kim@example.com' });
    const token = await dialog.getByLabel('Invitation token').inputValue();
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-password-reset');
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(token);
    // The token sets a new password.
    const answer = await t.anonymous.post<{ customer_id: string }>('/auth/accept-invitation', { invitation_token: token, password: 'kims-new-password-1' });
    expect(answer.customer_id).toBe(CUSTOMER);
    expect(await t.login('kim@example.com', 'kims-new-password-1')).toBeTruthy();
  });

  it('deletes a user after a confirmation, and Escape leaves them', async () => {
    const { page } = admin;
    await t.createUser('USER_ROLE', 'leaver@example.com');
    // The list is read when the section opens.
    await openSection(page, 'Roles');
    await openSection(page, 'Users');
    await row(page, 'leaver@example.com').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete leaver@example.com?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'leaver@example.com').getByRole('button', { name: 'Delete' }).click();
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-delete-user');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'Deleted' }).textContent()).toBe('Deleted user leaver@example.com.');
    expect(await row(page, 'leaver@example.com').count()).toBe(0);
    expect(await userByEmail('leaver@example.com')).toBeUndefined();
  });
});

describe('the Admin page: roles', () => {
  it('lists the roles and the permissions each grants', async () => {
    const { page } = admin;
    await openSection(page, 'Roles');
    expect(new URL(page.url()).hash).toBe('#/admin/roles');
    expect(await page.getByRole('table', { name: 'Roles' }).getByRole('rowheader').allTextContents()).toEqual(['USER_ROLE', 'ADMIN_ROLE']);
    expect(await row(page, 'USER_ROLE').getByRole('listitem').allTextContents()).toEqual([
      'event.read', 'event.export', 'gateway.read', 'jobconfig.read', 'jobanalysis.run', 'feature.read', 'asset.download',
    ]);
    expect(await row(page, 'ADMIN_ROLE').getByRole('listitem').count()).toBe(16);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-roles');
  });
});

describe('the Admin page by keyboard', () => {
  it('opens a section and a dialog, fills it and closes it with the keyboard alone', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Users', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Users', level: 2 }).waitFor();
    await page.getByRole('button', { name: 'New user' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'New user' });
    // The first field has the focus; Tab goes on through the form.
    await page.keyboard.type('Ada');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Byron');
    expect([await dialog.getByLabel('First name').inputValue(), await dialog.getByLabel('Last name').inputValue()]).toEqual(['Ada', 'Byron']);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // Back where it was opened from.
    expect(await page.evaluate('document.activeElement.textContent')).toBe('New user');
  });
});

describe('the Admin page: API keys', () => {
  it('creates a key with the permissions and expiry chosen, shows it once and never again, and revokes it', async () => {
    const { page } = admin;
    await openSection(page, 'API keys');
    await expect.poll(() => page.getByRole('table', { name: 'API keys' }).getByRole('cell').allTextContents()).toEqual(['No API keys.']);
    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.getByLabel('Name').fill('nightly-report');
    // Every permission of the administrator is offered, none chosen.
    expect(await dialog.getByRole('group', { name: 'Permissions' }).getByRole('checkbox').count()).toBe(16);
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe('Body field "permissions" must NOT have fewer than 1 items.');
    await dialog.getByRole('checkbox', { name: 'event.read' }).check();
    await dialog.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-new-api-key');
    const before = Date.now();
    await dialog.getByRole('button', { name: 'Create' }).click();

    const shown = page.getByRole('dialog', { name: 'API key nightly-report' });
    const key = await shown.getByLabel('Key').inputValue();
    expect(key).toMatch(/^shk_[A-Za-z0-9_-]{43}$/);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-api-key');
    // The key works, with the permission and expiry chosen.
    const current = await fetch(`${t.url}/api-keys/current`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await current.json()) as { name: string; permissions: string[]; expires_at: number };
    expect([current.status, body.name, body.permissions]).toEqual([200, 'nightly-report', ['event.read']]);
    expect(body.expires_at - before).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(body.expires_at - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });

    const cells = await row(page, 'nightly-report').getByRole('cell').allTextContents();
    expect([cells[0], cells[4]]).toEqual(['event.read', 'Revoke']);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-api-keys');
    // Never again: not on the page, nor after going away and back, nor after a reload.
    expect(await page.content()).not.toContain(key);
    await openSection(page, 'Users');
    await openSection(page, 'API keys');
    await row(page, 'nightly-report').waitFor();
    expect(await page.content()).not.toContain(key);
    await page.reload();
    await row(page, 'nightly-report').waitFor();
    expect(await page.content()).not.toContain(key);

    await row(page, 'nightly-report').getByRole('button', { name: 'Revoke' }).click();
    const revoke = page.getByRole('dialog', { name: 'Revoke the API key nightly-report?' });
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-revoke-api-key');
    await revoke.getByRole('button', { name: 'Revoke' }).click();
    await revoke.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'Revoked' }).textContent()).toBe('Revoked API key "nightly-report".');
    expect(await row(page, 'nightly-report').count()).toBe(0);
    expect((await fetch(`${t.url}/api-keys/current`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });
});

describe('the Admin page: audit log', () => {
  /** The rows of the audit log shown: time, action, actor, target, address, details. */
  const entries = (page: Page) => page.getByRole('table', { name: 'Audit log' }).locator('tbody tr:has(th)');

  it('filters by action and time range, a keyset page of 50 at a time', async () => {
    const { page } = admin;
    // 60 entries of one action: two pages.
    const gateways = Array.from({ length: 60 }, (_, i) => ({ name: `Dock ${i + 1}`, usecase: 'picking', station: `s-${i + 1}` }));
    await t.admin.post(`/${CUSTOMER}/gateways/bulk-create`, { gateways });
    await openSection(page, 'Audit log');
    await entries(page).first().waitFor();
    await page.getByLabel('Action').selectOption('apikey.created');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => entries(page).count()).toBe(1);
    const key = (await t.admin.get<{ items: { target: { id: string } }[] }>(`/${CUSTOMER}/audit-log?action=apikey.created`)).items[0]!;
    const cells = await entries(page).first().getByRole('cell').allTextContents();
    expect(cells).toEqual(['apikey.created', `user ${ADMIN_EMAIL}`, `api_key ${key.target.id}`, '127.0.0.1', expect.stringContaining('"name":"nightly-report","permissions":["event.read"]')]);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-audit');

    await page.getByLabel('Action').selectOption('gateway.created');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => entries(page).count()).toBe(50);
    const { items } = await t.admin.get<{ items: { id: string; details: { name: string } }[] }>(`/${CUSTOMER}/audit-log?action=gateway.created`);
    const details = async () => (await entries(page).locator('td:last-child').allTextContents()).map((text) => (JSON.parse(text) as { name: string }).name);
    expect(await details()).toEqual(items.slice(0, 50).map((e) => e.details.name));
    const pages = page.getByRole('group', { name: 'Audit log pages' });
    await pages.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => entries(page).count()).toBe(10);
    expect(await details()).toEqual(items.slice(50).map((e) => e.details.name));
    expect(await pages.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => entries(page).count()).toBe(50);
    expect(await pages.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);

    // A range that ends before the entries holds none of them; one that ends before it starts is refused.
    await page.getByLabel('From').fill('2020-01-01T00:00');
    await page.getByLabel('To').fill('2020-01-02T00:00');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Audit log' }).getByRole('cell').allTextContents()).toEqual(['No entries in this range.']);
    await page.getByLabel('To').fill('2019-01-01T00:00');
    await page.getByRole('button', { name: 'Show' }).click();
    const [from, to] = (await page.evaluate('[new Date("2020-01-01T00:00").getTime(), new Date("2019-01-01T00:00").getTime()]')) as number[];
    expect(await page.getByRole('alert').textContent()).toBe(`Query parameter "start_time" (${from}) is after "end_time" (${to}): the range must not end before it starts.`);
  });
});

describe('the Admin page: retention', () => {
  const shown = (page: Page) => page.getByRole('definition').allTextContents();

  it('sets the period, reads it back after a reload, and keeps events for ever again', async () => {
    const { page } = admin;
    await openSection(page, 'Retention');
    await expect.poll(() => shown(page)).toEqual(['for ever', 'none yet']);
    expect(await page.getByRole('radio', { name: 'For ever' }).isChecked()).toBe(true);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-retention');

    await page.getByRole('radio', { name: 'For a number of days' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Enter how many days to keep events: a whole number from 1 to 36500.');
    await page.getByLabel('Days', { exact: true }).fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Body field "events_days" must be >= 1.');
    await page.getByLabel('Days', { exact: true }).fill('90');
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-retention-days');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).textContent()).toBe('Saved: events are kept 90 days.');
    expect((await shown(page))[0]).toBe('90 days');
    expect((await t.admin.get<{ events_days: number | null }>(`/${CUSTOMER}/retention`)).events_days).toBe(90);

    await page.reload();
    await expect.poll(async () => (await shown(page))[0]).toBe('90 days');
    expect(await page.getByRole('radio', { name: 'For a number of days' }).isChecked()).toBe(true);
    expect(await page.getByLabel('Days', { exact: true }).inputValue()).toBe('90');

    await page.getByRole('radio', { name: 'For ever' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).textContent()).toBe('Saved: events are kept for ever.');
    expect((await t.admin.get<{ events_days: number | null }>(`/${CUSTOMER}/retention`)).events_days).toBeNull();
  });

  it('showed nothing wrong in the administrator\'s page but the refusals the tests provoked', () => {
    const refused = (status: string) => `Failed to load resource: the server responded with a status of ${status}`;
    expect(admin.problems).toEqual([
      refused('409 (Conflict)'), // a user's e-mail address taken
      refused('400 (Bad Request)'), // no role
      refused('409 (Conflict)'), // an invitation for a user with a password
      refused('400 (Bad Request)'), // a key without permissions
      refused('400 (Bad Request)'), // an audit range that ends before it starts
      refused('400 (Bad Request)'), // 0 days
    ]);
  });
});

describe('the Admin page for a session without some permissions', () => {
  it('offers only the sections and actions the session may use', async () => {
    const { page, problems, close } = await openConsole(browser, t.url, '#/admin/users');
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    // The console decides what to offer from /me's permissions, kept with the session: take some away.
    await page.evaluate(`(() => {
      const session = JSON.parse(sessionStorage.getItem('scanhub.session'));
      const taken = ['apikey.write', 'audit.read', 'retention.write'];
      session.user.permissions = session.user.permissions.filter((p) => !taken.includes(p));
      sessionStorage.setItem('scanhub.session', JSON.stringify(session));
    })()`);
    // A new hash alone keeps the document: the reload reads the session again.
    await page.goto(`${t.url}/#/admin/retention`);
    await page.reload();
    await page.getByRole('heading', { name: 'Retention', level: 2 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Admin' }).getByRole('link').allTextContents()).toEqual(['Users', 'Roles', 'Retention']);
    // Read, not set: no form.
    await expect.poll(async () => (await page.getByRole('definition').allTextContents())[0]).toBe('for ever');
    expect(await page.getByRole('main').getByRole('button').count()).toBe(0);
    await page.goto(`${t.url}/#/admin/api-keys`);
    await page.getByText('Your role does not allow this section').waitFor();
    expect(await page.getByRole('main').getByRole('paragraph').textContent()).toBe(
      'Your role does not allow this section (it needs the permission apikey.write); ask an administrator.',
    );
    expect(problems).toEqual([]);
    await close();
  });
});

describe('the Admin page for a USER_ROLE user', () => {
  it('is neither linked nor shown by its URL', async () => {
    await t.createUser('USER_ROLE', 'viewer@example.com');
    const { page, problems, close } = await openConsole(browser, t.url, '#/admin/api-keys');
    await signIn(page, 'viewer@example.com', 'user-password-123');
    await page.getByRole('heading', { name: 'Admin', level: 1 }).waitFor();
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Gateways', 'Scanners', 'Live', 'Events', 'Jobs']);
    expect(await page.getByRole('navigation', { name: 'Admin' }).count()).toBe(0);
    expect(await page.getByRole('main').textContent()).toBe('AdminYour role does not allow this page (it needs the permission user.write); ask an administrator.');
    expect(problems).toEqual([]);
    await close();
  });
});
