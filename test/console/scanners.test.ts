// The Scanners page (console/pages/scanners/): the devices list of docs/devices.md with status and
// battery badges, the gateway's name, keyset pages, the gateway/status/low-battery filters equal to
// the API's answers, and a scanner appearing from an event a real gateway publishes over MQTT.
import { randomUUID } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../src/client/devices.js';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { eventRow } from '../helpers/events.js';
import { GatewayClients, provisionGateway } from '../helpers/mqtt.js';
import { insertEvents } from '../helpers/store-rows.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
/** The gateways' ids by name. */
let ids: Record<string, string>;
const devices = new GatewayClients();

/** The table's row of the scanner `id` (its id is the row's header). */
const row = (page: Page, id: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: id, exact: true }) });
/** The scanners listed, in order. */
const listed = (page: Page) => page.getByRole('table', { name: 'Scanners' }).getByRole('rowheader').allTextContents();
/** What the Gateway column shows: the name, then the start of the id. */
const gatewayCell = (name: string) => `${name} ${ids[name]!.slice(0, 8)}`;
/** The ids of the scanners the API lists for the query (all pages of 500 fit in one). */
const apiIds = async (query: string) => (await t.admin.get<{ items: Device[] }>(`/${CUSTOMER}/devices?${query}`)).items.map((d) => d.device_id);
/** Waits for the table to show exactly these scanners (a filter's answer has arrived). */
const expectListed = (page: Page, ids: string[]) => expect.poll(() => listed(page)).toEqual(ids);
const select = (page: Page, label: string): Locator => page.getByLabel(label, { exact: true });

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  const gateways = ['Dock 1', 'Dock 2'].map((name) => ({ name, usecase: 'picking', station: name.toLowerCase().replace(' ', '-') }));
  await t.admin.post(`/${CUSTOMER}/gateways/bulk-create`, { gateways });
  const { items } = await t.admin.get<{ items: { id: string; name: string }[] }>(`/${CUSTOMER}/gateways`);
  ids = Object.fromEntries(items.map((g) => [g.name, g.id]));
  const now = Date.now();
  await insertEvents(t, CUSTOMER, [
    // More than a page of 50: ring-001 ... ring-052, active on Dock 1.
    ...Array.from({ length: 52 }, (_, i) =>
      eventRow({ created: now - 10 * MINUTE, device_id: `ring-${String(i + 1).padStart(3, '0')}`, gateway_id: ids['Dock 1']!, device_battery: 80, device_firmware: '2.4.1' }),
    ),
    eventRow({ created: now - 3 * HOUR, type: 'telemetry', device_id: 'ring-idle', gateway_id: ids['Dock 2']! }),
    eventRow({ created: now - 8 * DAY, device_id: 'ring-lost', gateway_id: ids['Dock 1']!, device_battery: 60, device_firmware: '1.0' }),
    eventRow({ created: now - 20 * MINUTE, device_id: 'ring-low', gateway_id: ids['Dock 2']!, device_battery: 12.4 }),
  ]);
  admin = await openConsole(browser, t.url, '#/scanners');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await devices.endAll();
  await browser?.close();
  await t?.close();
});

describe('the Scanners page', () => {
  it('lists the scanners by id a page at a time, with their status, battery, last event and gateway', async () => {
    const { page } = admin;
    await row(page, 'ring-001').waitFor();
    const names = await listed(page);
    expect(names).toEqual(Array.from({ length: 50 }, (_, i) => `ring-${String(i + 1).padStart(3, '0')}`));
    expect(await row(page, 'ring-001').getByRole('cell').allTextContents()).toEqual(['Active', '80 %', '10 min ago', gatewayCell('Dock 1'), '2.4.1', 'Send command']);
    expect(await page.getByRole('group', { name: 'Scanners pages' }).textContent()).toBe('Previous pageScanners 1–50Next page');
    await expectAccessible(page);
    await saveScreenshots(page, 'scanners');

    await page.getByRole('button', { name: 'Next page' }).click();
    await expectListed(page, ['ring-051', 'ring-052', 'ring-idle', 'ring-lost', 'ring-low']);
    expect(await row(page, 'ring-idle').getByRole('cell').allTextContents()).toEqual(['Inactive', 'unknown', '3 h ago', gatewayCell('Dock 2'), 'unknown', 'Send command']);
    expect(await row(page, 'ring-lost').getByRole('cell').allTextContents()).toEqual(['Lost', '60 %', '8 days ago', gatewayCell('Dock 1'), '1.0', 'Send command']);
    expect(await row(page, 'ring-low').getByRole('cell').allTextContents()).toEqual(['Active', '12 % low', '20 min ago', gatewayCell('Dock 2'), 'unknown', 'Send command']);
    expect(await page.getByRole('group', { name: 'Scanners pages' }).textContent()).toBe('Previous pageScanners 51–55Next page');
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await expectAccessible(page);
    await saveScreenshots(page, 'scanners-page-2');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expectListed(page, names);
  });

  it('filters by status, low battery and gateway, listing what the API lists for the same filters', async () => {
    const { page } = admin;
    await select(page, 'Status').selectOption('LOST');
    await expectListed(page, await apiIds('status=LOST'));
    expect(await listed(page)).toEqual(['ring-lost']);

    await select(page, 'Status').selectOption('');
    await page.getByLabel('Low battery (below 20 %)').check();
    await expectListed(page, await apiIds('battery_below=20'));
    expect(await listed(page)).toEqual(['ring-low']);

    await page.getByLabel('Low battery (below 20 %)').uncheck();
    await select(page, 'Gateway').selectOption({ label: 'Dock 2' });
    await expectListed(page, await apiIds(`gateway_id=${ids['Dock 2']}`));
    expect(await listed(page)).toEqual(['ring-idle', 'ring-low']);
    await expectAccessible(page);
    await saveScreenshots(page, 'scanners-filtered');

    await select(page, 'Status').selectOption('LOST');
    await expect.poll(() => page.getByRole('table', { name: 'Scanners' }).getByRole('cell').allTextContents()).toEqual(['No scanner matches the filters.']);
    expect(await page.getByRole('group', { name: 'Scanners pages' }).count()).toBe(0);
    await select(page, 'Status').selectOption('');
    await select(page, 'Gateway').selectOption('');
    await row(page, 'ring-001').waitFor();
  });

  it('shows a scanner of a gateway that publishes over MQTT, with the values of its event, after Refresh', async () => {
    const { page } = admin;
    const gateway = await provisionGateway(t, { name: 'Dock 3' });
    ids['Dock 3'] = gateway.id;
    const client = await devices.connect(gateway);
    await client.publishAsync(
      gateway.topic,
      JSON.stringify({ id: randomUUID(), type: 'scan', scan_code: '4006381333931', device_id: 'ring-mqtt', device_battery: 45, device_firmware: '3.0.0' }),
      { qos: 1 },
    );
    // Stored once the API lists it: ingest commits in batches (docs/devices.md "Kept by ingest").
    await expect.poll(() => apiIds('status=ACTIVE&battery_below=50')).toEqual(['ring-low', 'ring-mqtt']);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await select(page, 'Gateway').selectOption({ label: 'Dock 3' });
    await expectListed(page, ['ring-mqtt']);
    expect(await row(page, 'ring-mqtt').getByRole('cell').allTextContents()).toEqual(['Active', '45 %', 'just now', gatewayCell('Dock 3'), '3.0.0', 'Send command']);
    // Nothing went wrong in the page all along: no console error, no uncaught exception, nothing the CSP refused.
    expect(admin.problems).toEqual([]);
  });

  it('offers the list to a USER_ROLE user, who may read events and gateways', async () => {
    await t.createUser('USER_ROLE', 'reader@example.com');
    const { page, problems, close } = await openConsole(browser, t.url, '#/scanners');
    await signIn(page, 'reader@example.com', 'user-password-123');
    await row(page, 'ring-001').waitFor();
    expect(await row(page, 'ring-low').count()).toBe(0);
    expect(await page.getByRole('main').getByRole('button').allTextContents()).toEqual(['Refresh', 'Previous page', 'Next page']);
    expect(problems).toEqual([]);
    await close();
  });
});
