import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeQrCode, expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { GatewayClients, provisionedGateway, type Provisioned } from '../helpers/mqtt.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
const devices = new GatewayClients();

/** The board's row of the gateway named `name` (its name is the row's header). */
const row = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });

/** The id of the gateway named `name`, from the API. */
async function gatewayId(name: string): Promise<string> {
  const { items } = await t.admin.get<{ items: { id: string; name: string }[] }>(`/${CUSTOMER}/gateways?limit=500`);
  return items.find((g) => g.name === name)!.id;
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  // Enough gateways for two pages of the board, named so that the order by name shows.
  const gateways = Array.from({ length: 60 }, (_, i) => ({ name: `Aisle ${i + 1}`, usecase: i % 2 ? 'picking' : 'packing', station: `station-${i + 1}` }));
  await t.admin.post(`/${CUSTOMER}/gateways/bulk-create`, { gateways });
  admin = await openConsole(browser, t.url, '#/gateways');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await devices.endAll();
  await browser?.close();
  await t?.close();
});

describe('the Gateways board', () => {
  it('lists the gateways by name, a page at a time, and searches name, station and use case as the user types', async () => {
    const { page } = admin;
    await row(page, 'Aisle 1').waitFor();
    const names = async () => page.getByRole('rowheader').allTextContents();
    expect((await names()).slice(0, 3)).toEqual(['Aisle 1', 'Aisle 2', 'Aisle 3']);
    expect(await names()).toHaveLength(50);
    expect(await page.getByRole('group', { name: 'Gateways pages' }).textContent()).toContain('Gateways 1–50 of 60');
    expect(await row(page, 'Aisle 1').getByRole('cell').allTextContents()).toEqual(['Not registered', 'never', 'station-1', 'packing', 'ProvisionCertificateDelete']);
    await expectAccessible(page);
    await saveScreenshots(page, 'gateways');

    await page.getByRole('button', { name: 'Next page' }).click();
    expect(await names()).toEqual(['Aisle 51', 'Aisle 52', 'Aisle 53', 'Aisle 54', 'Aisle 55', 'Aisle 56', 'Aisle 57', 'Aisle 58', 'Aisle 59', 'Aisle 60']);
    await page.getByLabel('Search').fill('station-5');
    expect(await names()).toEqual(['Aisle 5', 'Aisle 50', 'Aisle 51', 'Aisle 52', 'Aisle 53', 'Aisle 54', 'Aisle 55', 'Aisle 56', 'Aisle 57', 'Aisle 58', 'Aisle 59']);
    await page.getByLabel('Search').fill('PICKING aisle 1');
    expect(await names()).toEqual(['Aisle 10', 'Aisle 12', 'Aisle 14', 'Aisle 16', 'Aisle 18']);
    await page.getByLabel('Search').fill('nothing like it');
    expect(await page.getByRole('table', { name: 'Gateways' }).getByRole('cell').allTextContents()).toEqual(['No gateway matches the search.']);
    await page.getByLabel('Search').fill('');
  });

  it('creates a gateway, showing the API\'s details when it refuses one', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'New gateway' }).click();
    const dialog = page.getByRole('dialog', { name: 'New gateway' });
    await dialog.getByLabel('Name').fill('Aisle 7');
    await dialog.getByLabel('Use case').fill('picking');
    await dialog.getByLabel('Station').fill('dock-7');
    await expectAccessible(page);
    await saveScreenshots(page, 'gateways-new');
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe('A gateway named "Aisle 7" already exists.');

    await dialog.getByLabel('Name').fill('Dock 7');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'Created' }).textContent()).toBe('Created gateway "Dock 7".');
    expect(await row(page, 'Dock 7').getByRole('cell').allTextContents()).toEqual(['Not registered', 'never', 'dock-7', 'picking', 'ProvisionCertificateDelete']);
  });

  it('provisions it: the QR code read from the screen redeems the token, and the device publishes over MQTT', async () => {
    const { page } = admin;
    await row(page, 'Dock 7').getByRole('button', { name: 'Provision', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Provision Dock 7' });
    const code = dialog.getByRole('img', { name: 'Provisioning code' });
    await code.waitFor();
    // At least 300 pixels square: read from a laptop screen at arm's length.
    expect((await code.boundingBox())!.width).toBeGreaterThanOrEqual(300);
    await expectAccessible(page);
    await saveScreenshots(page, 'gateways-provisioning');

    const decoded = JSON.parse((await decodeQrCode(code)) ?? 'null') as { registration_url: string; token: string };
    expect(decoded).toEqual({ registration_url: `${t.url}/provisioning`, token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(await dialog.getByLabel('Registration URL').inputValue()).toBe(decoded.registration_url);
    expect(await dialog.getByLabel('Token').inputValue()).toBe(decoded.token);
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect(await row(page, 'Dock 7').getByRole('cell').first().textContent()).toBe('Registering');

    // The device's side: redeem the token at the URL of the code, connect with the PKCS#12, publish a scan.
    const response = await fetch(decoded.registration_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: decoded.token }) });
    expect(response.status).toBe(200);
    const device = provisionedGateway((await response.json()) as Provisioned);
    const client = await devices.connect(device);
    await client.publishAsync(device.topic, JSON.stringify({ id: randomUUID(), type: 'scan', code: '4006381333931' }), { qos: 1 });

    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => row(page, 'Dock 7').getByRole('cell').allTextContents()).toEqual(['Active', 'just now', 'dock-7', 'picking', 'ReprovisionRevokeCertificateDelete']);
  });

  it('revokes its certificate after a confirmation: the badge changes, and Reprovision is offered', async () => {
    const { page } = admin;
    await row(page, 'Dock 7').getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the certificate of Dock 7?' });
    await expectAccessible(page);
    await saveScreenshots(page, 'gateways-revoke');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await row(page, 'Dock 7').getByRole('cell').allTextContents()).toEqual(['Not registered', 'just now', 'dock-7', 'picking', 'ReprovisionCertificateDelete']);

    await row(page, 'Dock 7').getByRole('button', { name: 'Certificate' }).click();
    const details = page.getByRole('dialog', { name: 'Certificate of Dock 7' });
    await details.getByText('revoked').waitFor();
    const { serial } = await t.admin.get<{ serial: string }>(`/${CUSTOMER}/gateways/${await gatewayId('Dock 7')}/certificate`);
    expect(await details.getByRole('definition').allTextContents()).toEqual(['revoked', serial, expect.any(String), expect.any(String)]);
    await expectAccessible(page);
    await saveScreenshots(page, 'gateways-certificate');
    await details.getByRole('button', { name: 'Close' }).click();
  });

  it('deletes a gateway after a confirmation, and Cancel or Escape leave it', async () => {
    const { page } = admin;
    await row(page, 'Dock 7').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Dock 7?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'Dock 7').getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await row(page, 'Dock 7').count()).toBe(0);
    expect((await t.admin.get<{ items: { name: string }[] }>(`/${CUSTOMER}/gateways?limit=500`)).items.map((g) => g.name)).not.toContain('Dock 7');
    // Nothing went wrong in the page all along but the refused duplicate name: no other console
    // error, no uncaught exception, nothing the CSP refused.
    expect(admin.problems).toEqual(['Failed to load resource: the server responded with a status of 409 (Conflict)']);
  });

  it('offers a USER_ROLE user the board without New gateway or any action it may not take', async () => {
    await t.createUser('USER_ROLE', 'reader@example.com');
    const { page, problems, close } = await openConsole(browser, t.url, '#/gateways');
    await signIn(page, 'reader@example.com', 'user-password-123');
    await row(page, 'Aisle 1').waitFor();
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Name', 'Status', 'Last seen', 'Station', 'Use case']);
    expect(await page.getByRole('main').getByRole('button').allTextContents()).toEqual(['Refresh', 'Previous page', 'Next page']);
    await expectAccessible(page);
    expect(problems).toEqual([]);
    await close();
  });
});
