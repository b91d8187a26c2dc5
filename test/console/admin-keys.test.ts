import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionsOf } from '../../src/domain/permissions.js';
import { openAdminSection, refused, row, startAdminConsole, type AdminConsole } from '../helpers/admin-page.js';
import { expectAccessible, saveScreenshots, type ConsolePage } from '../helpers/browser.js';
import { ADMIN_EMAIL, CUSTOMER, type TestServer } from '../helpers/server.js';

// The Admin page's API keys, audit log and retention (admin.test.ts: users and roles).

let t: TestServer;
let admin: ConsolePage;
let started: AdminConsole | undefined;

beforeAll(async () => {
  started = await startAdminConsole();
  ({ t, admin } = started);
});
afterAll(() => started?.close());

describe('the Admin page: API keys', () => {
  it('creates a key with the permissions and expiry chosen, shows it once and never again, and revokes it', async () => {
    const { page } = admin;
    await openAdminSection(page, 'API keys');
    await expect.poll(() => page.getByRole('table', { name: 'API keys' }).getByRole('cell').allTextContents()).toEqual(['No API keys.']);
    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.getByLabel('Name').fill('nightly-report');
    // Every permission of the administrator is offered, none chosen.
    expect(await dialog.getByRole('group', { name: 'Permissions' }).getByRole('checkbox').count()).toBe(permissionsOf(['ADMIN_ROLE']).length);
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
    await openAdminSection(page, 'Users');
    await openAdminSection(page, 'API keys');
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
    await openAdminSection(page, 'Audit log');
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
    await openAdminSection(page, 'Retention');
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
});

describe('the administrator\'s page', () => {
  it('showed nothing wrong but the refusals the tests provoked', () => {
    expect(admin.problems).toEqual([
      refused('400 (Bad Request)'), // a key without permissions
      refused('400 (Bad Request)'), // an audit range that ends before it starts
      refused('400 (Bad Request)'), // 0 days
    ]);
  });
});
