import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionsOf } from '../../src/domain/permissions.js';
import { openAdminSection, refused, row, startAdminConsole, type AdminConsole } from '../helpers/admin-page.js';
import { expectAccessible, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, type TestServer } from '../helpers/server.js';

// The Admin page's users, roles, and who is offered what; API keys, the audit log and retention
// are in admin-keys.test.ts.

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
let started: AdminConsole | undefined;

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
  started = await startAdminConsole();
  ({ t, browser, admin } = started);
});
afterAll(() => started?.close());

describe('the Admin page: users', () => {
  it('opens on Users, with a link per section the administrator may see', async () => {
    const { page } = admin;
    await row(page, ADMIN_EMAIL).waitFor();
    expect(new URL(page.url()).hash).toBe('#/admin/users');
    expect(await page.title()).toBe('Users · Admin · scanhub');
    expect(await page.getByRole('navigation', { name: 'Admin' }).getByRole('link').allTextContents()).toEqual(['Users', 'Roles', 'API keys', 'Audit log', 'Retention', 'Webhooks']);
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
    await openAdminSection(page, 'Roles');
    await openAdminSection(page, 'Users');
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
    await openAdminSection(page, 'Roles');
    expect(new URL(page.url()).hash).toBe('#/admin/roles');
    expect(await page.getByRole('table', { name: 'Roles' }).getByRole('rowheader').allTextContents()).toEqual(['USER_ROLE', 'ADMIN_ROLE']);
    expect(await row(page, 'USER_ROLE').getByRole('listitem').allTextContents()).toEqual([
      'event.read', 'event.export', 'gateway.read', 'jobconfig.read', 'jobanalysis.run', 'feature.read', 'asset.download',
    ]);
    expect(await row(page, 'ADMIN_ROLE').getByRole('listitem').allTextContents()).toEqual(permissionsOf(['ADMIN_ROLE']));
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
    // The first field takes the focus; Tab goes on through the form.
    await expect.poll(() => page.evaluate('document.activeElement?.labels?.[0]?.textContent')).toBe('First name');
    await page.keyboard.type('Ada');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Byron');
    expect([await dialog.getByLabel('First name').inputValue(), await dialog.getByLabel('Last name').inputValue()]).toEqual(['Ada', 'Byron']);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // Back where it was opened from.
    await expect.poll(() => page.evaluate('document.activeElement.textContent')).toBe('New user');
  });
});

describe('the administrator\'s page', () => {
  it('showed nothing wrong but the refusals the tests provoked', () => {
    expect(admin.problems).toEqual([
      refused('409 (Conflict)'), // a user's e-mail address taken
      refused('400 (Bad Request)'), // no role
      refused('409 (Conflict)'), // an invitation for a user with a password
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
      const taken = ['apikey.write', 'audit.read', 'retention.write', 'webhook.write'];
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
